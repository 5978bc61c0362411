// Listening sockets a service manager made for serve (socket activation: LISTEN_PID,
// LISTEN_FDS, LISTEN_FDNAMES, from descriptor 3 on). serve adopts one only where its config
// expects a socket of that name, and only once it is that socket: a unix socket of the
// expected type, listening, bound at the configured path.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace sandbox_host {

class InheritedSockets {
 public:
  // Takes the three variables out of this process's environment (unsetenv: call it before
  // any thread starts), whoever they were meant for. When LISTEN_PID is this process, its
  // descriptors are made close-on-exec at once, so that no child (a sandbox's stage 1 above
  // all) inherits them; when it is another's, nothing is adopted. Throws naming a malformed
  // variable.
  static InheritedSockets from_environment();

  bool empty() const noexcept { return sockets_.empty(); }

  // The socket named `name` that listens at `path` with `type` (SOCK_STREAM,
  // SOCK_SEQPACKET), or an empty fd when none named so is bound there. A socket of that
  // name at that path that is not what serve expects (family, type, not listening) is
  // refused with a std::runtime_error naming the mismatch.
  UniqueFd take(const std::string &name, int type, const std::filesystem::path &path);

  // Refuses, naming each, the inherited sockets that take() did not adopt: a socket unit
  // and a config that disagree must not leave a socket nobody serves. expected says what
  // the config asks for, for the message.
  void require_all_taken(const std::string &expected) const;

 private:
  struct Socket {
    std::string name;
    UniqueFd fd;
  };
  std::vector<Socket> sockets_;
};

}  // namespace sandbox_host
