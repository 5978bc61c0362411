// `sandbox-host serve` with a [launcher], run as root or as nobody from an install that user
// can run, and what a test reads of the processes it holds.
#pragma once

#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sandbox_host::test {

enum class User { root, nobody };

std::string user_name(User user);
std::string read_file(const std::filesystem::path &path);
// Every process below pid, found through /proc/<pid>/task/*/children.
std::vector<pid_t> descendants(pid_t pid);
std::vector<pid_t> children_of(pid_t pid);
std::string cmdline(pid_t pid);  // arguments joined by spaces
std::size_t descriptors(pid_t pid);

class Service {
 public:
  // launcher_lines: more keys of the [launcher] table; config_lines: the config's first
  // lines (top-level keys, more tables); wrapper: a command that runs serve (strace, say),
  // after the switch to the user; modules: more module files for the install.
  explicit Service(User user, const std::string &launcher_lines = "",
                   const std::string &config_lines = "",
                   const std::vector<std::string> &wrapper = {},
                   const std::vector<std::string> &modules = {});
  ~Service();
  Service(const Service &) = delete;
  Service &operator=(const Service &) = delete;

  // argv prefix that runs a command as the service's user.
  std::vector<std::string> prefix() const;
  // A client command as the service's user: sandbox-host-launch --via SOCKET ARGS...
  std::vector<std::string> launch(std::vector<std::string> args) const;
  bool answers() const;
  // Ends serve (SIGTERM) and waits for it, so that what it writes as it exits is in its
  // audit; the destructor does it otherwise.
  void stop();
  UniqueFd connect_raw() const;
  pid_t pid() const;  // serve's, inside its wrapper
  // What the service holds, to compare before and after: its descriptors, and its
  // processes that are no prepared sandbox (a plugin, or a stage 1 that carries one).
  std::size_t fds() const { return descriptors(pid()); }
  std::vector<pid_t> plugins(const std::string &marker) const;
  std::size_t processes() const { return descendants(pid()).size(); }
  // Its children that have exited and that nobody reaped.
  std::vector<pid_t> zombies() const;
  std::string audit() const { return read_file(audit_); }
  const std::string &socket() const { return socket_; }
  const UnprivilegedInstall &install() const { return install_; }
  std::filesystem::path dir() const { return home_.dir(); }

 private:
  User user_;
  bool wrapped_;
  bool stopped_ = false;
  UnprivilegedInstall install_;
  TempFile home_{"", "unused"};
  std::string socket_;
  std::filesystem::path audit_;
  std::unique_ptr<RunningProcess> process_;
};

}  // namespace sandbox_host::test
