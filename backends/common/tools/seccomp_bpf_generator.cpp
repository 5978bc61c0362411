// Build-time tool: compiles the seccomp rules (seccomp_rules.cpp) to BPF with libseccomp
// and writes each filter as a C++ array: seccomp_bpf_generator OUTPUT.cpp
#include "../src/seccomp_rules.hpp"

#include <linux/filter.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <vector>

namespace {

std::vector<sock_filter> compile(const sandbox_host::backends::SeccompContext &ctx) {
  FILE *bpf = std::tmpfile();
  if (bpf == nullptr || seccomp_export_bpf(ctx.get(), fileno(bpf)) != 0) {
    throw std::runtime_error("seccomp_export_bpf failed");
  }
  std::vector<sock_filter> program;
  std::rewind(bpf);
  for (sock_filter op{}; std::fread(&op, sizeof op, 1, bpf) == 1;) program.push_back(op);
  std::fclose(bpf);
  return program;
}

void write_program(std::ostream &out, const char *name, const std::vector<sock_filter> &program) {
  out << "const sock_filter k" << name << "[] = {\n";
  for (const auto &op : program) {
    out << "    {" << op.code << ", " << unsigned{op.jt} << ", " << unsigned{op.jf} << ", " << op.k
        << "U},\n";
  }
  out << "};\nconst unsigned short k" << name << "Length = " << program.size() << ";\n\n";
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: seccomp_bpf_generator OUTPUT.cpp\n";
    return 2;
  }
  try {
    using sandbox_host::backends::build_filter;
    using sandbox_host::backends::Substitute;
    const auto default_program = compile(build_filter(Substitute::nothing));
    const auto no_ipc_program = compile(build_filter(Substitute::ipc_namespace));
    const auto no_ipc_no_net_program = compile(build_filter(Substitute::ipc_and_net_namespaces));
    std::ofstream out(argv[1]);
    out << "// Generated at build time by seccomp_bpf_generator from seccomp_rules.cpp.\n"
        << "#include \"seccomp_program.hpp\"\n\n"
        << "namespace sandbox_host::backends {\n\n";
    write_program(out, "DefaultSeccompProgram", default_program);
    write_program(out, "NoSharedIpcSeccompProgram", no_ipc_program);
    write_program(out, "NoSharedIpcUnixSocketsOnlySeccompProgram", no_ipc_no_net_program);
    out << "}  // namespace sandbox_host::backends\n";
    return out ? 0 : 1;
  } catch (const std::exception &e) {
    std::cerr << "seccomp_bpf_generator: " << e.what() << "\n";
    return 1;
  }
}
