// connect: an egress module written against the sandbox-host SDK alone, the starting point
// for your own. It answers HTTP CONNECT for the host:port pairs the operator lists, dials
// them directly and relays bytes both ways; it refuses everything else, and every refusal
// goes to the host's audit sink. A proxied plugin's HTTPS_PROXY leads to it:
//
//   [egress]
//   implementation = "connect"
//
//   [egress.connect]
//   socket = "/run/user/1000/connect.sock"  # where a sandbox's 127.0.0.1:<port> leads
//   allow = ["api.example.com:443"]         # exact host:port pairs ("[::1]:8080" for IPv6)
//   port = 3128                             # the port inside the sandbox; default 3128
//
// What it leaves out, and the built-in proxy has: domain patterns, destination address
// rules (a name that resolves to a private address is dialled), TLS termination and token
// injection, SOCKS5 and plain-HTTP forwarding.
#include <sandbox_host/module.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using sandbox_host::UniqueFd;

constexpr std::size_t kMaxHead = 8192;
constexpr int kHeadTimeoutMs = 10000;
constexpr int kConnectTimeoutMs = 10000;
constexpr std::size_t kMaxSessions = 256;

std::string errno_text(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

// 1 to 65535 written in decimal; 0 for anything else.
int port_number(const std::string &text) {
  if (text.empty() || text.size() > 5) return 0;
  for (unsigned char c : text) {
    if (!std::isdigit(c)) return 0;
  }
  const int number = std::stoi(text);
  return number <= 65535 ? number : 0;
}

// "host:port" or "[v6]:port", lower-cased; nullopt when it is not one.
std::optional<std::string> authority(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  if (port_number(text.substr(colon + 1)) == 0) return std::nullopt;
  const std::string host = text.substr(0, colon);
  const bool bracketed = host.front() == '[' && host.back() == ']';
  if (!bracketed && host.find_first_of("[]:/@ \t") != std::string::npos) return std::nullopt;
  return text;
}

// The host and port of an authority, brackets removed.
std::pair<std::string, std::string> split(const std::string &target) {
  const auto colon = target.rfind(':');
  std::string host = target.substr(0, colon);
  if (host.front() == '[') host = host.substr(1, host.size() - 2);
  return {host, target.substr(colon + 1)};
}

// Waits until fd is ready for events, or the stop descriptor fires (false), or timeout_ms.
bool wait_for(int fd, short events, int stop_fd, int timeout_ms) {
  pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
  int n;
  do n = ::poll(fds, 2, timeout_ms);
  while (n < 0 && errno == EINTR);
  return n > 0 && fds[1].revents == 0 && fds[0].revents != 0;
}

bool write_all(int fd, const char *data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

class ConnectEgress final : public sandbox_host::EgressModule {
 public:
  // Settings are read when the host loads the module, so a mistake stops the loading and
  // `sandbox-host modules` names the key.
  explicit ConnectEgress(const sandbox_host::HostInfo &host) {
    const sandbox_host::OpConfig &config = host.config;
    config.allow_only({"socket", "allow", "port"});
    socket_ = config.value("socket").value_or("");
    if (socket_.empty() || socket_.front() != '/') {
      throw config.error("socket", "must be an absolute path, where sandboxes are relayed to");
    }
    if (socket_.size() >= sizeof(sockaddr_un::sun_path)) {
      throw config.error("socket", "is longer than a unix socket address holds");
    }
    for (const std::string &entry : config.values("allow")) {
      auto parsed = authority(entry);
      if (!parsed) throw config.error("allow", "\"" + entry + "\" is not host:port");
      allow_.insert(*parsed);
    }
    if (allow_.empty()) throw config.error("allow", "names no host:port; nothing could pass");
    if (auto port = config.value("port")) {
      const int number = port_number(*port);
      if (number == 0) throw config.error("port", "is not a port of 1 to 65535");
      port_ = static_cast<std::uint16_t>(number);
    }
  }

  ~ConnectEgress() override { stop(); }

  sandbox_host::EgressRoute route() const override { return {socket_, "", port_}; }

  void start(sandbox_host::EgressSinks sinks) override {
    sinks_.emplace(sinks);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(errno_text("pipe"));
    stop_read_.reset(pipe_fds[0]);
    stop_write_.reset(pipe_fds[1]);
    listener_ = listen_on(socket_);
    acceptor_ = std::thread([this] { accept_loop(); });
  }

  // Every thread polls stop_read_, which becomes readable once and stays so.
  void stop() noexcept override {
    if (!acceptor_.joinable()) return;
    const char byte = 0;
    while (::write(stop_write_.get(), &byte, 1) < 0 && errno == EINTR) {
    }
    acceptor_.join();
    std::lock_guard lock(sessions_mutex_);
    for (auto &session : sessions_) session.thread.join();
    sessions_.clear();
    listener_.reset();
    ::unlink(socket_.c_str());
  }

  std::vector<std::pair<std::string, std::string>> report() const override {
    std::string allowed;
    for (const auto &entry : allow_) allowed += (allowed.empty() ? "" : ", ") + entry;
    return {{"socket", socket_}, {"allow", allowed}};
  }

 private:
  struct Session {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  static UniqueFd listen_on(const std::string &path) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path.c_str(), path.size());
    const auto *raw = reinterpret_cast<const sockaddr *>(&address);
    // A socket left by an earlier run is replaced; one that answers is another egress's, and
    // any other file is not ours to remove.
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(path + " exists and is not a socket");
      UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (probe && ::connect(probe.get(), raw, sizeof(address)) == 0) {
        throw std::runtime_error(path + " is in use: something listens on it already");
      }
      ::unlink(path.c_str());
    }
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw std::runtime_error(errno_text("socket"));
    if (::bind(fd.get(), raw, sizeof(address)) != 0) {
      throw std::runtime_error(errno_text("bind " + path));
    }
    // The sandbox's init connects as this user; nobody else needs to. (Not umask: the host
    // is a process of many threads, and umask is the whole process's.)
    if (::chmod(path.c_str(), 0600) != 0) throw std::runtime_error(errno_text("chmod " + path));
    if (::listen(fd.get(), 128) != 0) throw std::runtime_error(errno_text("listen " + path));
    return fd;
  }

  void accept_loop() {
    while (wait_for(listener_.get(), POLLIN, stop_read_.get(), -1)) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) continue;
      std::lock_guard lock(sessions_mutex_);
      sessions_.remove_if([](Session &s) {
        if (!s.done) return false;
        s.thread.join();
        return true;
      });
      if (sessions_.size() >= kMaxSessions) {
        refuse(client.get(), "503 Service Unavailable", "sessions",
               "a connection past " + std::to_string(kMaxSessions) + " at once", "");
        continue;
      }
      Session &session = sessions_.emplace_back();
      session.thread = std::thread([this, &session, fd = client.release()] {
        serve(UniqueFd(fd));
        session.done = true;
      });
    }
  }

  void refuse(int client, const std::string &status, const std::string &rule,
              const std::string &attempted, const std::string &hint) const {
    // Recorded before the client hears of it, so that a record is there once it has.
    sinks_->refused(rule, attempted, hint);
    const std::string reply = "HTTP/1.1 " + status + "\r\nContent-Length: 0\r\n\r\n";
    write_all(client, reply.data(), reply.size());
  }

  void serve(UniqueFd client) const {
    // Only this user's processes: a sandbox's init relays as the user who launched it.
    ucred peer{};
    socklen_t size = sizeof(peer);
    if (::getsockopt(client.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 ||
        peer.uid != ::geteuid()) {
      sinks_->refused("peer", "a connection of uid " + std::to_string(peer.uid),
                      "only the user running the egress may use it");
      return;
    }
    std::string head;
    char buffer[65536];
    while (head.find("\r\n\r\n") == std::string::npos) {
      if (head.size() > kMaxHead) {
        return refuse(client.get(), "431 Request Header Fields Too Large", "head",
                      "a request head past " + std::to_string(kMaxHead) + " bytes", "");
      }
      if (!wait_for(client.get(), POLLIN, stop_read_.get(), kHeadTimeoutMs)) return;
      const ssize_t n = ::recv(client.get(), buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      head.append(buffer, static_cast<std::size_t>(n));
    }
    const std::size_t end = head.find("\r\n\r\n") + 4;
    const std::string line = head.substr(0, head.find("\r\n"));
    const auto first = line.find(' ');
    const auto second = line.find(' ', first == std::string::npos ? first : first + 1);
    if (first == std::string::npos || second == std::string::npos ||
        line.substr(0, first) != "CONNECT") {
      return refuse(client.get(), "405 Method Not Allowed", "method",
                    line.substr(0, std::min<std::size_t>(line.size(), 200)),
                    "this egress tunnels HTTP CONNECT only");
    }
    const auto target = authority(line.substr(first + 1, second - first - 1));
    if (!target || allow_.count(*target) == 0) {
      return refuse(
          client.get(), "403 Forbidden", "allow",
          "CONNECT " + line.substr(first + 1, std::min<std::size_t>(second - first - 1, 200)),
          "add the host:port to [egress.connect] allow");
    }
    UniqueFd upstream = dial(*target);
    if (!upstream) {
      return refuse(client.get(), "502 Bad Gateway", "dial", "CONNECT " + *target,
                    "the destination did not answer");
    }
    constexpr std::string_view established = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (!write_all(client.get(), established.data(), established.size())) return;
    sinks_->log("CONNECT " + *target);
    // Bytes the client sent after its head belong to the tunnel.
    if (head.size() > end && !write_all(upstream.get(), head.data() + end, head.size() - end)) {
      return;
    }
    relay(client.get(), upstream.get());
  }

  UniqueFd dial(const std::string &target) const {
    const auto [host, port] = split(target);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return {};
    UniqueFd connected;
    for (addrinfo *a = found; a != nullptr && !connected; a = a->ai_next) {
      UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
      if (!fd) continue;
      if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) continue;
      if (!wait_for(fd.get(), POLLOUT, stop_read_.get(), kConnectTimeoutMs)) continue;
      int error = 0;
      socklen_t size = sizeof(error);
      if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0 || error != 0) continue;
      const int flags = ::fcntl(fd.get(), F_GETFL);
      ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
      connected = std::move(fd);
    }
    ::freeaddrinfo(found);
    return connected;
  }

  // Both ways until both have ended, or stop; an end of one way is passed on as a
  // half-close.
  void relay(int client, int upstream) const {
    bool open[2] = {true, true};  // client -> upstream, upstream -> client
    char buffer[65536];
    while (open[0] || open[1]) {
      pollfd fds[3] = {{client, static_cast<short>(open[0] ? POLLIN : 0), 0},
                       {upstream, static_cast<short>(open[1] ? POLLIN : 0), 0},
                       {stop_read_.get(), POLLIN, 0}};
      if (::poll(fds, 3, -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[2].revents != 0) return;
      for (int way = 0; way < 2; ++way) {
        if (!open[way] || fds[way].revents == 0) continue;
        const int from = way == 0 ? client : upstream;
        const int to = way == 0 ? upstream : client;
        const ssize_t n = ::recv(from, buffer, sizeof(buffer), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || !write_all(to, buffer, static_cast<std::size_t>(n))) {
          if (n < 0) return;
          open[way] = false;
          ::shutdown(to, SHUT_WR);
        }
      }
    }
  }

  std::string socket_;
  std::set<std::string> allow_;
  std::uint16_t port_ = 3128;
  std::optional<sandbox_host::EgressSinks> sinks_;
  UniqueFd stop_read_, stop_write_, listener_;
  std::thread acceptor_;
  std::mutex sessions_mutex_;
  std::list<Session> sessions_;
};

}  // namespace

SANDBOX_HOST_EGRESS_MODULE(ConnectEgress, "connect", "0.1.0",
                           "HTTP CONNECT to listed host:port pairs, dialled directly")
