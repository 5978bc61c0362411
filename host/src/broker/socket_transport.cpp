#include <sandbox_host/host/broker/socket_transport.hpp>
#include <sandbox_host/host/identity/process_identity.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox_host::broker {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string &what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

class SocketConversation final : public Conversation {
 public:
  SocketConversation(int fd, const Serving &serving) : fd_(fd), serving_(serving) {}
  bool send(std::string_view frame) override {
    const auto deadline = std::chrono::steady_clock::now() + serving_.call.reply_timeout;
    for (;;) {
      const ssize_t n = ::send(fd_, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n == static_cast<ssize_t>(frame.size())) return true;
      if (n < 0 && errno == EINTR) continue;
      if (n >= 0 || errno != EAGAIN) return false;
      // A peer that reads slowly holds up its own reply, only while it is there, and only
      // until the reply's deadline.
      if (requester_gone() || serving_.call.stop.stop_requested()) return false;
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd ready{fd_, POLLOUT, 0};
      ::poll(&ready, 1, static_cast<int>(std::min(left, serving_.call.tick).count()));
    }
  }
  bool requester_gone() override {
    pollfd peer{fd_, POLLRDHUP, 0};
    return ::poll(&peer, 1, 0) > 0 && (peer.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }
  int wake_fd() const override { return fd_; }
  short wake_events() const override { return POLLRDHUP; }

 private:
  int fd_;
  const Serving &serving_;
};

}  // namespace

BrokerSocket::BrokerSocket(fs::path path, std::string label)
    : path_(std::move(path)), label_(std::move(label)) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.native().size() >= sizeof(address.sun_path)) {
    fail("socket path " + path_.string() + " is longer than " +
             std::to_string(sizeof(address.sun_path) - 1) + " bytes",
         ENAMETOOLONG);
  }
  std::memcpy(address.sun_path, path_.c_str(), path_.native().size() + 1);
  fd_.reset(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) fail("socket");
  // A socket file left by an earlier broker is replaced; anything else at the path is not.
  struct stat old {};
  if (::lstat(path_.c_str(), &old) == 0 && S_ISSOCK(old.st_mode)) ::unlink(path_.c_str());
  const mode_t mask = ::umask(077);
  const int bound = ::bind(fd_.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address);
  ::umask(mask);
  if (bound != 0) fail("cannot bind broker socket " + path_.string());
  if (::listen(fd_.get(), 128) != 0) fail("listen on " + path_.string());
}

BrokerSocket::BrokerSocket(fs::path path, std::string label, UniqueFd inherited)
    : path_(std::move(path)), label_(std::move(label)), fd_(std::move(inherited)), adopted_(true) {
  // The broker's loop polls its sockets and must never block in accept(2).
  const int flags = ::fcntl(fd_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd_.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    fail("make the inherited broker socket " + path_.string() + " non-blocking");
  }
}

BrokerSocket::~BrokerSocket() {
  if (!adopted_) ::unlink(path_.c_str());
}

UniqueFd BrokerSocket::accept() const {
  return UniqueFd(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
}

namespace {

std::string requester_of(const ucred &peer, const std::string &label, const fs::path &proc_dir) {
  const std::string user = "uid " + std::to_string(peer.uid);
  if (!label.empty()) return user + " socket " + label;
  const auto ns = pid_namespace(proc_dir, peer.pid);
  return user + (ns ? " pid namespace " + std::to_string(*ns) : " pid namespace unknown");
}

}  // namespace

Connection::Connection(UniqueFd connection, std::string label_, const fs::path &proc_dir)
    : fd(std::move(connection)),
      label(std::move(label_)),
      deadline(std::chrono::steady_clock::now() + kRequestTimeout) {
  socklen_t size = sizeof peer;
  if (::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    peer = ucred{0, static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
  } else {
    pidfd = connection_peer_pidfd(fd.get(), peer.pid, proc_dir);
  }
  requester = requester_of(peer, label, proc_dir);
}

void refuse_connection(Connection connection, const std::string &rule, const std::string &error,
                       Serving &serving) {
  // A request left unread would reset the connection when it closes, and the peer would
  // hear a reset instead of the refusal.
  ::recv(connection.fd.get(), nullptr, 0, MSG_DONTWAIT | MSG_TRUNC);
  for (const std::string &frame : {encode_frame({}), encode_frame({{}, {}, error, 0, true})}) {
    ::send(connection.fd.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  const std::string where = "socket request" +
                            (connection.label.empty() ? "" : " (" + connection.label + ")") +
                            " from pid " + std::to_string(connection.peer.pid);
  serving.record_refusal(rule, where, error, connection.label);
}

void answer_connection(Connection connection, Serving &serving) {
  const std::string &label = connection.label;
  const ucred &peer = connection.peer;
  const std::string where = "socket request" + (label.empty() ? "" : " (" + label + ")");
  SocketConversation conversation(connection.fd.get(), serving);
  // The empty frame that tells the client its request was taken (see the spool's).
  conversation.send(encode_frame({}));
  Asker asker;
  asker.pid = peer.pid;
  asker.uid = peer.uid;
  asker.pidfd = std::move(connection.pidfd);
  const std::string from = where + " from pid " + std::to_string(peer.pid);
  auto refuse_with = [&](const std::string &rule, const std::string &error) {
    refuse(conversation, error);
    serving.record_refusal(rule, from, error, label);
  };
  // The request is read before anything is refused: a socket closed with a message still
  // unread resets the connection, and the peer would get no refusal, only the reset.
  std::string message(serving.max_request_bytes + 1, '\0');
  const ssize_t n =
      ::recv(connection.fd.get(), message.data(), message.size(), MSG_TRUNC | MSG_DONTWAIT);
  if (n <= 0) {
    serving.record_refusal("request-empty", from, "the connection closed without a request", label);
    return;
  }
  if (peer.uid != serving.uid) {
    refuse_with("request-uid", "the asking process runs as uid " + std::to_string(peer.uid) +
                                   "; this broker answers uid " + std::to_string(serving.uid) +
                                   " only");
    return;
  }
  if (!asker.pidfd || !running(asker.pidfd.get())) {
    refuse_with("request-peer", "the asking process is gone");
    return;
  }
  Request request;
  try {
    if (static_cast<std::size_t>(n) > serving.max_request_bytes) {
      throw RequestError("request of " + std::to_string(n) +
                         " bytes, more than the broker's max_request_bytes " +
                         std::to_string(serving.max_request_bytes));
    }
    message.resize(static_cast<std::size_t>(n));
    request = parse_request(message, serving.max_request_bytes);
  } catch (const RequestError &e) {
    refuse_with("request-refused", e.what());
    return;
  }
  const std::string refusal =
      answer(serving.operations, request, asker, conversation, serving.call);
  if (refusal.empty()) {
    ++serving.answered;
  } else {
    serving.record_refusal("op-refused", "op " + quoted_prefix(request.op) + " " + from, refusal,
                           label);
  }
}

}  // namespace sandbox_host::broker
