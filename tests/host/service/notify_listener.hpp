// systemd's side of the notify protocol, for tests: a datagram socket that a service is
// given as NOTIFY_SOCKET, and the notices it sends, read one at a time.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace sandbox_host::test {

class NotifyListener {
 public:
  // Bound at dir/notify.sock.
  explicit NotifyListener(const std::filesystem::path &dir);
  const std::filesystem::path &path() const noexcept { return path_; }
  // "NOTIFY_SOCKET=<path>"
  std::string variable() const { return "NOTIFY_SOCKET=" + path_.string(); }
  // The next notice, or nullopt when none came within timeout.
  std::optional<std::string> next(std::chrono::milliseconds timeout) const;
  // The next notice holding line (a whole line of it, "READY=1" say), skipping others;
  // nullopt when none came within timeout.
  std::optional<std::string> wait_for(const std::string &line,
                                      std::chrono::milliseconds timeout) const;

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

// Whether notice has line as one of its newline-separated lines.
bool has_line(const std::string &notice, const std::string &line);
// The value of NAME=... in notice, or nullopt.
std::optional<std::string> value_of(const std::string &notice, const std::string &name);

}  // namespace sandbox_host::test
