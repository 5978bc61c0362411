#include "notify_listener.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <array>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace sandbox_host::test {

NotifyListener::NotifyListener(const std::filesystem::path &dir)
    : path_(dir / "notify.sock"), fd_(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
  if (!fd_ || ::bind(fd_.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    throw std::runtime_error("notify listener: bind " + path_.string());
  }
}

std::optional<std::string> NotifyListener::next(std::chrono::milliseconds timeout) const {
  pollfd ready{fd_.get(), POLLIN, 0};
  if (::poll(&ready, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
  std::array<char, 4096> buffer{};
  const ssize_t n = ::recv(fd_.get(), buffer.data(), buffer.size(), 0);
  if (n < 0) return std::nullopt;
  return std::string(buffer.data(), static_cast<std::size_t>(n));
}

std::optional<std::string> NotifyListener::wait_for(const std::string &line,
                                                    std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto notice = next(left);
    if (!notice) return std::nullopt;
    if (has_line(*notice, line)) return notice;
  }
}

bool has_line(const std::string &notice, const std::string &line) {
  std::istringstream lines(notice);
  for (std::string each; std::getline(lines, each);) {
    if (each == line) return true;
  }
  return false;
}

std::optional<std::string> value_of(const std::string &notice, const std::string &name) {
  std::istringstream lines(notice);
  for (std::string each; std::getline(lines, each);) {
    if (each.starts_with(name + "=")) return each.substr(name.size() + 1);
  }
  return std::nullopt;
}

}  // namespace sandbox_host::test
