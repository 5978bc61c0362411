#include <sandbox_host/host/launch_channel.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace sandbox_host {
namespace {

constexpr char kReady = 'R';
constexpr int kStdioCount = 3;

[[noreturn]] void throw_errno(const std::string &what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

ChannelPair make_launch_channel() {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) {
    throw_errno("launch channel: socketpair");
  }
  return {ends[0], ends[1]};
}

void send_launch(int channel, const LaunchMessage &message, const Stdio &stdio) {
  const std::string text = encode_launch_message(message);
  if (text.size() > kMaxLaunchMessage) {
    throw std::length_error(
        "launch for plugin \"" + message.spec.plugin_name + "\": " + std::to_string(text.size()) +
        " bytes of Spec and environment, over " + std::to_string(kMaxLaunchMessage));
  }
  const std::array<int, kStdioCount> fds{stdio.in, stdio.out, stdio.err};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof fds)> control{};
  iovec data{const_cast<char *>(text.data()), text.size()};
  msghdr header{};
  header.msg_iov = &data;
  header.msg_iovlen = 1;
  header.msg_control = control.data();
  header.msg_controllen = control.size();
  cmsghdr *rights = CMSG_FIRSTHDR(&header);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof fds);
  std::memcpy(CMSG_DATA(rights), fds.data(), sizeof fds);
  ssize_t sent;
  do {
    sent = ::sendmsg(channel, &header, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) throw_errno("launch channel: send the launch");
}

void report_ready(int channel) {
  ssize_t sent;
  do {
    sent = ::send(channel, &kReady, 1, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != 1) throw_errno("report ready");
}

bool report_status(int channel, int status) noexcept {
  const std::int32_t value = status;
  ssize_t sent;
  do {
    sent = ::send(channel, &value, sizeof value, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  return sent == sizeof value;
}

std::optional<int> receive_status(int channel) {
  std::int32_t value = 0;
  ssize_t received;
  do {
    // MSG_TRUNC: the length of the whole message, so that a longer one shows.
    received = ::recv(channel, &value, sizeof value, MSG_TRUNC);
  } while (received < 0 && errno == EINTR);
  if (received == 0 || (received < 0 && errno == ECONNRESET)) return std::nullopt;
  if (received < 0) throw_errno("launch channel: receive the plugin's status");
  if (received != sizeof value || value < 0 || value > 255) {
    throw std::runtime_error("launch channel: a malformed status report");
  }
  return value;
}

LaunchMessage receive_launch(int channel) {
  // Sized by the message waiting (MSG_PEEK | MSG_TRUNC gives its whole length), not by the
  // cap: a cap-sized buffer is a fresh mapping whose every page faults while it is zeroed.
  ssize_t waiting;
  do {
    waiting = ::recv(channel, nullptr, 0, MSG_PEEK | MSG_TRUNC);
  } while (waiting < 0 && errno == EINTR);
  if (waiting < 0) throw_errno("receive");
  // One byte more than the cap at most, so that an oversized message shows as MSG_TRUNC.
  std::vector<char> buffer(
      std::min<std::size_t>(static_cast<std::size_t>(waiting) + 1, kMaxLaunchMessage + 1));
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 8)> control{};
  iovec data{buffer.data(), buffer.size()};
  msghdr header{};
  header.msg_iov = &data;
  header.msg_iovlen = 1;
  header.msg_control = control.data();
  header.msg_controllen = control.size();
  ssize_t received;
  do {
    received = ::recvmsg(channel, &header, MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  if (received < 0) throw_errno("receive");
  if (received == 0) throw std::runtime_error("the host closed the channel without a launch");

  std::vector<int> fds;
  for (cmsghdr *c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  auto close_all = [&fds] {
    for (int fd : fds) ::close(fd);
  };
  if ((header.msg_flags & MSG_CTRUNC) != 0 || fds.size() != kStdioCount) {
    close_all();
    throw std::runtime_error("expected stdin, stdout and stderr with the launch, got " +
                             std::to_string(fds.size()) + " descriptors");
  }
  // One that arrived as 0-2 (a slot this process had closed) would be overwritten below.
  for (int &fd : fds) {
    if (fd < kStdioCount && (fd = ::fcntl(fd, F_DUPFD_CLOEXEC, kStdioCount)) < 0) {
      throw_errno("install the plugin's stdio");
    }
  }
  for (int target = 0; target < kStdioCount; ++target) {
    if (::dup2(fds[target], target) < 0) {
      const int saved = errno;
      close_all();
      errno = saved;
      throw_errno("install the plugin's stdio");
    }
  }
  close_all();
  if ((header.msg_flags & MSG_TRUNC) != 0) {
    throw std::runtime_error("launch message over " + std::to_string(kMaxLaunchMessage) + " bytes");
  }
  try {
    return decode_launch_message(std::string_view(buffer.data(), static_cast<size_t>(received)));
  } catch (const std::invalid_argument &e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace sandbox_host
