#include <sandbox_host/host/identity/sock_diag.hpp>

#include <linux/sock_diag.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace sandbox_host {
namespace {

std::string cause(int error) {
  return std::strerror(error);
}

}  // namespace

std::optional<SockDiagReply> reply_to(std::span<const char> bytes, std::uint32_t sequence,
                                      std::size_t answer_size) {
  const auto *header = reinterpret_cast<const nlmsghdr *>(bytes.data());
  if (bytes.size() < sizeof(nlmsghdr) || !NLMSG_OK(header, static_cast<unsigned>(bytes.size()))) {
    throw SockDiagError("the kernel's socket table gave a malformed answer");
  }
  if (header->nlmsg_seq != sequence) return std::nullopt;
  if (header->nlmsg_type == NLMSG_ERROR && header->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr))) {
    // An error of 0 is an acknowledgement, which no request here asks for.
    if (const int error = -static_cast<const nlmsgerr *>(NLMSG_DATA(header))->error; error > 0) {
      return SockDiagReply{nullptr, error};
    }
  }
  if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY || header->nlmsg_len < NLMSG_LENGTH(answer_size)) {
    throw SockDiagError("the kernel's socket table gave an answer of an unknown kind");
  }
  return SockDiagReply{header, 0};
}

SockDiag::SockDiag() : fd_(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) {
  if (!fd_) {
    throw SockDiagError("the kernel's socket table cannot be asked (socket: " + cause(errno) + ")");
  }
}

SockDiagReply SockDiag::ask(nlmsghdr *header, std::size_t size, std::size_t answer_size) {
  header->nlmsg_len = static_cast<__u32>(size);
  header->nlmsg_type = SOCK_DIAG_BY_FAMILY;
  header->nlmsg_flags = NLM_F_REQUEST;
  header->nlmsg_seq = ++sequence_;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd_.get(), header, size, 0, reinterpret_cast<sockaddr *>(&kernel), sizeof kernel) !=
      static_cast<ssize_t>(size)) {
    throw SockDiagError("the kernel's socket table cannot be asked (sendto: " + cause(errno) + ")");
  }
  // The reply is queued by the time sendto returns; replies to requests given up on before
  // it (a caller that threw between its send and its read) come first and are passed over.
  for (int read = 0; read <= kStaleReplies;) {
    const ssize_t length = ::recv(fd_.get(), reply_, sizeof reply_, MSG_DONTWAIT);
    if (length < 0 && errno == EINTR) continue;
    if (length <= 0) {
      throw SockDiagError("the kernel's socket table gave no answer (" +
                          (length < 0 ? cause(errno) : std::string("empty")) + ")");
    }
    ++read;
    if (auto reply = reply_to({reply_, static_cast<std::size_t>(length)}, sequence_, answer_size)) {
      return *reply;
    }
  }
  throw SockDiagError("the kernel's socket table gave no answer (more than " +
                      std::to_string(kStaleReplies) + " replies to earlier requests queued)");
}

}  // namespace sandbox_host
