#include <sandbox_host/host/kernel_audit/audit_netlink.hpp>

#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox_host::kernel_audit {
namespace {

// The kernel grows each receive buffer to this, so that a burst of records waits there
// rather than being dropped before the reader's thread runs.
constexpr int kReceiveBuffer = 4 << 20;

UniqueFd audit_socket(int flags) {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, NETLINK_AUDIT));
  if (!fd) throw std::system_error(errno, std::generic_category(), "kernel audit: socket");
  return fd;
}

}  // namespace

std::optional<KernelAuditStatus> kernel_audit_status() {
  UniqueFd fd;
  try {
    fd = audit_socket(0);
  } catch (const std::system_error &) {
    return std::nullopt;
  }
  const timeval wait{1, 0};  // the kernel answers at once; this only bounds a broken one
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  nlmsghdr request{};
  request.nlmsg_len = NLMSG_LENGTH(0);
  request.nlmsg_type = AUDIT_GET;
  request.nlmsg_flags = NLM_F_REQUEST;
  request.nlmsg_seq = 1;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), &request, request.nlmsg_len, 0, reinterpret_cast<sockaddr *>(&kernel),
               sizeof kernel) < 0) {
    return std::nullopt;
  }
  alignas(nlmsghdr) char reply[NLMSG_SPACE(sizeof(audit_status)) + 256];
  for (int tries = 0; tries < 4; ++tries) {
    const ssize_t got = ::recv(fd.get(), reply, sizeof reply, 0);
    if (got < 0) return std::nullopt;
    auto *header = reinterpret_cast<nlmsghdr *>(reply);
    if (!NLMSG_OK(header, static_cast<unsigned>(got))) return std::nullopt;
    if (header->nlmsg_type == NLMSG_ERROR) {
      const auto *error = static_cast<const nlmsgerr *>(NLMSG_DATA(header));
      if (error->error != 0) return std::nullopt;  // EPERM: no CAP_AUDIT_CONTROL
      continue;
    }
    if (header->nlmsg_type != AUDIT_GET) continue;
    audit_status status{};
    std::memcpy(&status, NLMSG_DATA(header),
                std::min<std::size_t>(sizeof status, header->nlmsg_len - NLMSG_LENGTH(0)));
    return KernelAuditStatus{status.enabled != 0, status.backlog, status.lost};
  }
  return std::nullopt;
}

bool may_read_kernel_audit() {
  if (::geteuid() != 0) return false;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_TO_INDEX(CAP_AUDIT_READ)].effective & CAP_TO_MASK(CAP_AUDIT_READ)) != 0;
}

UniqueFd subscribe_to_kernel_audit() {
  UniqueFd fd = audit_socket(SOCK_NONBLOCK);
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &kReceiveBuffer, sizeof kReceiveBuffer) !=
      0) {
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &kReceiveBuffer, sizeof kReceiveBuffer);
  }
  sockaddr_nl group{};
  group.nl_family = AF_NETLINK;
  group.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&group), sizeof group) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "kernel audit: subscribe to its read-only log");
  }
  return fd;
}

}  // namespace sandbox_host::kernel_audit
