// The socket transport, for sandboxes that may use unix sockets: a SOCK_SEQPACKET socket per
// sandbox, one connection per request, the request one message and each reply frame one
// message. The kernel names the peer (SO_PEERCRED, and a pidfd with SO_PEERPIDFD where it
// has it), so nothing is scanned.
#pragma once

#include <sandbox_host/host/broker/serving.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <filesystem>
#include <string>

namespace sandbox_host::broker {

// A listening socket at path (mode 0600), removed again when destroyed. label names the
// sandbox it serves in the audit.
class BrokerSocket {
 public:
  BrokerSocket(std::filesystem::path path, std::string label);
  ~BrokerSocket();
  BrokerSocket(const BrokerSocket &) = delete;
  BrokerSocket &operator=(const BrokerSocket &) = delete;

  int fd() const noexcept { return fd_.get(); }
  const std::filesystem::path &path() const noexcept { return path_; }
  const std::string &label() const noexcept { return label_; }
  // A connection waiting to be accepted, or an invalid fd.
  UniqueFd accept() const;

 private:
  std::filesystem::path path_;
  std::string label_;
  UniqueFd fd_;
};

// Answers the one request of an accepted connection.
void answer_connection(UniqueFd connection, const std::string &label, Serving &serving);

}  // namespace sandbox_host::broker
