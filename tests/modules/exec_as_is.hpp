// What the test backends' stage 1 does for a cold launch: exec the plugin as it is.
#pragma once

#include <sandbox_host/module.hpp>
#include <sandbox_host/spec.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::test_modules {

[[noreturn]] inline void exec_as_is(const Spec &spec) {
  std::vector<char *> argv{const_cast<char *>(spec.binary_path.c_str())};
  for (const auto &arg : spec.args) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char *> envp;
  for (const auto &entry : spec.env) envp.push_back(const_cast<char *>(entry.c_str()));
  envp.push_back(nullptr);
  ::execve(spec.binary_path.c_str(), argv.data(), envp.data());
  throw std::runtime_error(std::string("exec: ") + std::strerror(errno));
}

// A backend that works everywhere, and whose cold launches exec the plugin as it is after the
// host's re-exec: the pool test backends derive from it and prepare their own way.
class ExecAsIsBackend : public Backend {
 public:
  ProbeReport probe() override { return {true, "", "", "", 0, {}}; }
  void build_command(const Spec &, CommandBuilder &command) override { command.reexec_stage1(); }
  void stage1(const Spec &spec) override { exec_as_is(spec); }
};

}  // namespace sandbox_host::test_modules
