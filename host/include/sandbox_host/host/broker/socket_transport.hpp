// The socket transport, for sandboxes that may use unix sockets: a SOCK_SEQPACKET socket per
// sandbox, one connection per request, the request one message and each reply frame one
// message. The kernel names the peer (SO_PEERCRED, and a pidfd with SO_PEERPIDFD where it
// has it), so nothing is scanned.
#pragma once

#include <sandbox_host/host/broker/serving.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace sandbox_host::broker {

// A listening socket at path (mode 0600), removed again when destroyed. label names the
// sandbox it serves in the audit.
class BrokerSocket {
 public:
  BrokerSocket(std::filesystem::path path, std::string label);
  // A listening socket a service manager made at path (socket activation), served as it is
  // and left in place when destroyed, for its socket unit to listen on again.
  BrokerSocket(std::filesystem::path path, std::string label, UniqueFd inherited);
  ~BrokerSocket();
  BrokerSocket(const BrokerSocket &) = delete;
  BrokerSocket &operator=(const BrokerSocket &) = delete;

  int fd() const noexcept { return fd_.get(); }
  const std::filesystem::path &path() const noexcept { return path_; }
  const std::string &label() const noexcept { return label_; }
  // A connection waiting to be accepted, or an invalid fd (errno says why).
  UniqueFd accept() const;

 private:
  std::filesystem::path path_;
  std::string label_;
  UniqueFd fd_;
  bool adopted_ = false;
};

// How long an accepted connection may take to send its request.
inline constexpr std::chrono::milliseconds kRequestTimeout{5000};

// An accepted connection, its peer named by the kernel. Until its request has arrived the
// broker's main loop holds it, not a thread: a peer that connects and sends nothing costs a
// descriptor and a place in the poll set, never a worker.
struct Connection {
  UniqueFd fd;
  ucred peer{};
  UniqueFd pidfd;  // the very process that connected, or nothing when it is gone
  std::string label;
  // The requester it counts against: its uid, and its socket's label or else its peer's
  // pid namespace.
  std::string requester;
  std::chrono::steady_clock::time_point deadline;  // for its request to arrive

  // Takes the peer's credentials and pidfd from the kernel; proc_dir serves the check of
  // the pid-based fallback on kernels without SO_PEERPIDFD, and the peer's pid namespace.
  Connection(UniqueFd fd, std::string label, const std::filesystem::path &proc_dir);
};

// Answers the one request of a connection whose request has arrived (or that hung up).
void answer_connection(Connection connection, Serving &serving);

// Refuses a connection at once, without waiting for or reading its request: the empty frame
// and the refusal, sent only as far as the socket takes them without blocking.
void refuse_connection(Connection connection, const std::string &rule, const std::string &error,
                       Serving &serving);

}  // namespace sandbox_host::broker
