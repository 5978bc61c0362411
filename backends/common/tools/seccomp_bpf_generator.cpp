// Build-time tool: compiles the default seccomp rules (seccomp_rules.cpp) to BPF with
// libseccomp and writes them as a C++ array: seccomp_bpf_generator OUTPUT.cpp
#include "../src/seccomp_rules.hpp"

#include <linux/filter.h>
#include <stdio.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: seccomp_bpf_generator OUTPUT.cpp\n";
    return 2;
  }
  try {
    auto ctx = sandbox_host::backends::build_default_filter();
    FILE *bpf = std::tmpfile();
    if (bpf == nullptr || seccomp_export_bpf(ctx.get(), fileno(bpf)) != 0) {
      std::cerr << "seccomp_bpf_generator: seccomp_export_bpf failed\n";
      return 1;
    }
    std::vector<sock_filter> program;
    std::rewind(bpf);
    for (sock_filter op{}; std::fread(&op, sizeof op, 1, bpf) == 1;) program.push_back(op);
    std::fclose(bpf);

    std::ofstream out(argv[1]);
    out << "// Generated at build time by seccomp_bpf_generator from seccomp_rules.cpp.\n"
        << "#include \"seccomp_program.hpp\"\n\n"
        << "namespace sandbox_host::backends {\n\n"
        << "const sock_filter kDefaultSeccompProgram[] = {\n";
    for (const auto &op : program) {
      out << "    {" << op.code << ", " << unsigned{op.jt} << ", " << unsigned{op.jf} << ", "
          << op.k << "U},\n";
    }
    out << "};\nconst unsigned short kDefaultSeccompProgramLength = " << program.size() << ";\n\n"
        << "}  // namespace sandbox_host::backends\n";
    return out ? 0 : 1;
  } catch (const std::exception &e) {
    std::cerr << "seccomp_bpf_generator: " << e.what() << "\n";
    return 1;
  }
}
