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
#include <string>
#include <utility>
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
  out << "static const sock_filter k" << name << "[] = {\n";
  for (const auto &op : program) {
    out << "    {" << op.code << ", " << unsigned{op.jt} << ", " << unsigned{op.jf} << ", " << op.k
        << "U},\n";
  }
  out << "};\nstatic const unsigned short k" << name << "Length = " << program.size() << ";\n\n";
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: seccomp_bpf_generator OUTPUT.cpp\n";
    return 2;
  }
  using sandbox_host::backends::build_filter;
  using sandbox_host::backends::Substitute;
  using sandbox_host::backends::Verdicts;
  // In the order of seccomp_program.hpp's table.
  const std::pair<Substitute, const char *> substitutes[] = {
      {Substitute::nothing, "Default"},
      {Substitute::ipc_namespace, "NoSharedIpc"},
      {Substitute::ipc_and_net_namespaces, "NoSharedIpcUnixSocketsOnly"}};
  const std::pair<Verdicts, const char *> verdicts[] = {{Verdicts::errno_only, "Errno"},
                                                        {Verdicts::notify, "Notify"},
                                                        {Verdicts::notify_and_trace, "Learn"}};
  try {
    std::ofstream out(argv[1]);
    out << "// Generated at build time by seccomp_bpf_generator from seccomp_rules.cpp.\n"
        << "#include \"seccomp_program.hpp\"\n\n"
        << "namespace sandbox_host::backends {\n\n";
    std::string table;
    for (const auto &[substitute, substitute_name] : substitutes) {
      table += "    {";
      for (const auto &[verdict, verdict_name] : verdicts) {
        const std::string name = std::string(substitute_name) + verdict_name + "Program";
        write_program(out, name.c_str(), compile(build_filter(substitute, verdict)));
        table += "{k" + name + "Length, const_cast<sock_filter *>(k" + name + ")}, ";
      }
      table += "},\n";
    }
    out << "const sock_fprog kSeccompPrograms[3][3] = {\n" << table << "};\n\n";
    out << "}  // namespace sandbox_host::backends\n";
    return out ? 0 : 1;
  } catch (const std::exception &e) {
    std::cerr << "seccomp_bpf_generator: " << e.what() << "\n";
    return 1;
  }
}
