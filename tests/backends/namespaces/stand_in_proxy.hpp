// A stand-in for the egress proxy in the tests of network proxied: a unix socket the test
// makes in a directory of its own, served one thread per connection by a handler the test
// chooses, and the requests an HTTP-speaking handler saw.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace sandbox_host::test {

// Reads until the peer's end of sending, bounded by the socket's receive timeout.
inline std::string read_to_end(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

inline bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until "\r\n\r\n" (an HTTP head); what came after it stays unread by the caller.
inline std::string read_head(int fd) {
  std::string head;
  char c;
  while (head.size() < 65536 && !head.ends_with("\r\n\r\n")) {
    const ssize_t n = ::recv(fd, &c, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    head.push_back(c);
  }
  return head;
}

class StandInProxy {
 public:
  using Handler = std::function<void(int fd)>;

  // Listens at path (mode 0666, for a sandbox launched by another user) with backlog;
  // accepts only once accept_now() was called when accept_at_once is false.
  StandInProxy(const std::string &path, Handler handler, int backlog = SOMAXCONN,
               bool accept_at_once = true)
      : handler_(std::move(handler)) {
    listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (!listener_ ||
        ::bind(listener_.get(), reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        ::chmod(path.c_str(), 0666) != 0 || ::listen(listener_.get(), backlog) != 0) {
      ADD_FAILURE() << "stand-in proxy at " << path << ": " << std::strerror(errno);
      return;
    }
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "stand-in proxy: pipe: " << std::strerror(errno);
      return;
    }
    stop_read_.reset(ends[0]);
    stop_write_.reset(ends[1]);
    if (accept_at_once) accept_now();
  }

  ~StandInProxy() {
    if (stop_write_) {
      ssize_t ignored = ::write(stop_write_.get(), "x", 1);
      (void)ignored;
    }
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard lock(mutex_);
    for (auto &thread : connections_) thread.join();
  }
  StandInProxy(const StandInProxy &) = delete;
  StandInProxy &operator=(const StandInProxy &) = delete;

  void accept_now() {
    if (!acceptor_.joinable()) acceptor_ = std::thread([this] { accept_loop(); });
  }

 private:
  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[1].revents != 0) return;
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) continue;
      // Bounded: a test that went wrong ends its connections instead of hanging.
      const timeval timeout{10, 0};
      ::setsockopt(client.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      ::setsockopt(client.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
      std::lock_guard lock(mutex_);
      connections_.emplace_back(
          [this, fd = std::make_shared<UniqueFd>(std::move(client))] { handler_(fd->get()); });
    }
  }

  Handler handler_;
  UniqueFd listener_, stop_read_, stop_write_;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> connections_;
};

// What an HTTP responder saw: each request's head (a SOCKS5 request first as
// "socks5h <host>:<port>\n") and the peer's uid.
class Requests {
 public:
  void add(std::string head, uid_t uid) {
    std::lock_guard lock(mutex_);
    heads_.push_back(std::move(head));
    uids_.push_back(uid);
  }
  std::vector<std::string> heads() const {
    std::lock_guard lock(mutex_);
    return heads_;
  }
  std::vector<uid_t> uids() const {
    std::lock_guard lock(mutex_);
    return uids_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> heads_;
  std::vector<uid_t> uids_;
};

// The peer's uid as the kernel has it (SO_PEERCRED).
inline uid_t peer_uid(int fd) {
  ucred credentials{};
  socklen_t size = sizeof credentials;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return uid_t(-1);
  return credentials.uid;
}

inline bool recv_exact(int fd, void *data, size_t size) {
  auto *out = static_cast<char *>(data);
  while (size > 0) {
    const ssize_t n = ::recv(fd, out, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The server's half of a SOCKS5 CONNECT without authentication. Returns what was asked
// for, "socks5h <host>:<port>" for a domain name (the client left resolving to the proxy),
// "socks5 address type <n>" otherwise; nullopt when the client broke off.
inline std::optional<std::string> socks5_connect(int fd) {
  unsigned char greeting[2];
  if (!recv_exact(fd, greeting, sizeof greeting) || greeting[0] != 5) return std::nullopt;
  std::string methods(greeting[1], '\0');
  if (!recv_exact(fd, methods.data(), methods.size()) ||
      !send_all(fd, std::string("\x05\x00", 2))) {
    return std::nullopt;
  }
  unsigned char request[4];  // version, command, reserved, address type
  if (!recv_exact(fd, request, sizeof request) || request[1] != 1) return std::nullopt;
  if (request[3] != 3) return "socks5 address type " + std::to_string(request[3]);
  unsigned char length = 0;
  std::string host;
  unsigned char port[2];
  if (!recv_exact(fd, &length, 1)) return std::nullopt;
  host.resize(length);
  if (!recv_exact(fd, host.data(), host.size()) || !recv_exact(fd, port, sizeof port)) {
    return std::nullopt;
  }
  if (!send_all(fd, std::string("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10))) {
    return std::nullopt;
  }
  return "socks5h " + host + ":" + std::to_string(port[0] * 256 + port[1]);
}

// The proxy's one port serves HTTP and SOCKS5, told apart by the first byte; so does this
// responder. It records the request and answers 200 with a body that names the request
// line, then closes.
inline StandInProxy::Handler http_responder(Requests &seen) {
  return [&seen](int fd) {
    std::string socks;
    char first = 0;
    if (::recv(fd, &first, 1, MSG_PEEK) == 1 && first == 5) {
      const auto asked = socks5_connect(fd);
      if (!asked) return;
      socks = *asked + "\n";
    }
    const std::string head = read_head(fd);
    if (head.empty()) return;  // connected and left without a request
    seen.add(socks + head, peer_uid(fd));
    const std::string line = head.substr(0, head.find("\r\n"));
    const std::string body = "stand-in saw " + line + "\n";
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                     "\r\nConnection: close\r\n\r\n" + body);
  };
}

}  // namespace sandbox_host::test
