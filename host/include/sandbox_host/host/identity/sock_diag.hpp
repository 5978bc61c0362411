// One request to the kernel's socket table (NETLINK_SOCK_DIAG, SOCK_DIAG_BY_FAMILY) and the
// one reply that answers it: written once for the broker's peer check (process_identity)
// and the egress proxy's (peer_identity), so that both hold a reply to its request by its
// sequence number and take the kernel's NLMSG_ERROR for the error it is.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <linux/netlink.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>

namespace sandbox_host {

// No answer could be read; the message says which step failed and why, naming "the
// kernel's socket table".
struct SockDiagError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the kernel said to a request: the SOCK_DIAG_BY_FAMILY message that answers it, or
// the errno of its NLMSG_ERROR (ENOENT: no such socket).
struct SockDiagReply {
  const nlmsghdr *answer = nullptr;  // null when error is set; valid until the next ask
  int error = 0;
};

// What one datagram read from the socket (bytes) says to the request numbered sequence:
// nullopt when it answers another request (an earlier one given up on). answer_size is the
// least payload an answer has (sizeof(inet_diag_msg), sizeof(unix_diag_msg)). Throws
// SockDiagError for a datagram that is malformed, or neither an answer nor an error.
std::optional<SockDiagReply> reply_to(std::span<const char> bytes, std::uint32_t sequence,
                                      std::size_t answer_size);

class SockDiag {
 public:
  // Throws SockDiagError when the socket cannot be opened.
  SockDiag();

  // Sends request (an nlmsghdr and the request after it; its type, flags and sequence
  // number are set here) and reads the reply to it, passing over at most
  // kStaleReplies replies to other requests. The kernel answers within the send, so a
  // missing reply is an error, never a wait. Throws SockDiagError when it cannot send, no
  // reply to it is queued, or what is queued is malformed.
  template <typename Request>
  SockDiagReply ask(Request &request, std::size_t answer_size) {
    return ask(&request.header, sizeof request, answer_size);
  }

  static constexpr int kStaleReplies = 16;

 private:
  SockDiagReply ask(nlmsghdr *header, std::size_t size, std::size_t answer_size);

  UniqueFd fd_;
  std::uint32_t sequence_ = 0;
  alignas(nlmsghdr) char reply_[8192];
};

}  // namespace sandbox_host
