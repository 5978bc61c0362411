#include <sandbox_host/host/learn/call_reader.hpp>

#include <sandbox_host/host/learn/dns_question.hpp>
#include <sandbox_host/host/learn/path_resolution.hpp>
#include <sandbox_host/host/learn/plugin_memory.hpp>
#include <sandbox_host/host/learn/proxy_request.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <fstream>

namespace sandbox_host::learn {
namespace {

// A DNS query over UDP is at most 512 bytes without EDNS, a few more with it; a proxy
// request's first line and a SOCKS5 request fit in 1 KiB unless the URI is huge, and a
// host past that is no name anyway.
constexpr std::size_t kPayloadBytes = 1024;
// How many messages of one sendmmsg are read: glibc's resolver sends A and AAAA together.
constexpr unsigned kMessagesRead = 2;
// The kernel's own bound on a sockaddr.
constexpr std::size_t kMaxSockaddr = sizeof(sockaddr_storage);
// The longest path the kernel takes, its NUL not counted.
constexpr std::size_t kMaxPath = PATH_MAX - 1;

pid_t thread_group(pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("Tgid:")) {
      try {
        return static_cast<pid_t>(std::stol(line.substr(5)));
      } catch (...) {
        return 0;
      }
    }
  }
  return 0;
}

int as_int(std::uint64_t argument) {
  return static_cast<int>(static_cast<std::uint32_t>(argument));
}

std::optional<Endpoint> read_sockaddr(pid_t pid, std::uint64_t address, std::uint64_t length) {
  if (address == 0 || length == 0) return std::nullopt;
  const auto bytes = read_bytes(pid, address, std::min<std::uint64_t>(length, kMaxSockaddr));
  if (!bytes) return std::nullopt;
  return parse_sockaddr(*bytes);
}

// The first iovec's bytes of a message, bounded.
std::optional<std::string> first_iovec(pid_t pid, const msghdr &message) {
  if (message.msg_iov == nullptr || message.msg_iovlen == 0) return std::nullopt;
  const auto vector = read_object<iovec>(pid, reinterpret_cast<std::uint64_t>(message.msg_iov));
  if (!vector || vector->iov_len == 0) return std::nullopt;
  return read_bytes(pid, reinterpret_cast<std::uint64_t>(vector->iov_base),
                    std::min<std::size_t>(vector->iov_len, kPayloadBytes));
}

}  // namespace

std::vector<Attempt> CallReader::read(const TracedCall &call) {
  if (call.data.arch != native_audit_arch()) return {};
  const auto shape = shape_of(call.data.nr);
  if (!shape) return {};
  std::vector<Attempt> attempts =
      shape->socket == SocketCall::none ? read_paths(call, *shape) : read_socket(call, *shape);
  // Read while the call waited: past its answer the memory may hold anything.
  if (!call.still_pending()) return {};
  return attempts;
}

std::vector<Attempt> CallReader::read_paths(const TracedCall &call, const CallShape &shape) {
  const auto &args = call.data.args;
  if (shape.at_flags >= 0 && (args[shape.at_flags] & AT_EMPTY_PATH) != 0) {
    // The call may name its descriptor alone ("" with AT_EMPTY_PATH): nothing new is named.
    const auto text = read_string(call.pid, args[shape.first.path], kMaxPath);
    if (!text || text->empty()) return {};
  }
  FileUse use = shape.first.use;
  if (shape.open_flags >= 0) {
    const auto flags = args[shape.open_flags];
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0) {
      use = FileUse::write;
    }
  }
  if (shape.access_mode >= 0 && (args[shape.access_mode] & W_OK) != 0) use = FileUse::write;

  std::vector<Attempt> attempts;
  auto add = [&](const PathArgument &argument, FileUse how) {
    const auto text = read_string(call.pid, args[argument.path], kMaxPath);
    if (!text) return;
    const int dirfd = argument.dirfd < 0 ? kNoDirfd : as_int(args[argument.dirfd]);
    const auto path = absolute_path(call.pid, dirfd, *text);
    if (path) attempts.push_back(FileAttempt{*path, how, std::string(shape.name)});
  };
  add(shape.first, use);
  if (shape.second) add(*shape.second, shape.second->use);
  return attempts;
}

std::vector<Attempt> CallReader::read_socket(const TracedCall &call, const CallShape &shape) {
  const auto &args = call.data.args;
  const pid_t pid = call.pid;
  const int fd = as_int(args[0]);
  std::vector<Attempt> attempts;
  const auto connected = [&]() -> std::optional<Endpoint> {
    const auto it = connected_.find({thread_group(pid), fd});
    if (it == connected_.end()) return std::nullopt;
    return it->second;
  };
  // One message: its address (else the socket's), what it carries.
  auto message = [&](std::optional<Endpoint> to, std::optional<std::string> payload) {
    if (!to) to = connected();
    if (!to) return;
    attempts.push_back(SocketAttempt{*to, std::string(shape.name)});
    if (payload) read_payload(*to, *payload, attempts);
  };
  switch (shape.socket) {
    case SocketCall::connect: {
      const auto to = read_sockaddr(pid, args[1], args[2]);
      if (!to) return {};
      if (const pid_t group = thread_group(pid); group != 0) connected_[{group, fd}] = *to;
      attempts.push_back(SocketAttempt{*to, std::string(shape.name)});
      return attempts;
    }
    case SocketCall::sendto: {
      const auto payload =
          read_bytes(pid, args[1], std::min<std::uint64_t>(args[2], kPayloadBytes));
      message(read_sockaddr(pid, args[4], args[5]), payload);
      return attempts;
    }
    case SocketCall::sendmsg: {
      const auto header = read_object<msghdr>(pid, args[1]);
      if (!header) return {};
      message(read_sockaddr(pid, reinterpret_cast<std::uint64_t>(header->msg_name),
                            header->msg_namelen),
              first_iovec(pid, *header));
      return attempts;
    }
    case SocketCall::sendmmsg: {
      const unsigned count = static_cast<unsigned>(std::min<std::uint64_t>(args[2], kMessagesRead));
      for (unsigned i = 0; i < count; ++i) {
        const auto header = read_object<mmsghdr>(pid, args[1] + i * sizeof(mmsghdr));
        if (!header) break;
        message(read_sockaddr(pid, reinterpret_cast<std::uint64_t>(header->msg_hdr.msg_name),
                              header->msg_hdr.msg_namelen),
                first_iovec(pid, header->msg_hdr));
      }
      return attempts;
    }
    case SocketCall::none:
      break;
  }
  return attempts;
}

void CallReader::read_payload(const Endpoint &to, const std::string &payload,
                              std::vector<Attempt> &out) {
  if (!to.internet()) return;
  if (to.port == 53) {
    if (auto name = dns_question(payload)) {
      out.push_back(NameAttempt{std::move(*name), NameAttempt::Source::dns, 0});
    }
    return;
  }
  if (proxy_port_ != 0 && to.port == proxy_port_ && to.loopback()) {
    if (auto target = proxy_target(payload)) {
      out.push_back(NameAttempt{std::move(target->host), NameAttempt::Source::proxy, target->port});
    }
  }
}

}  // namespace sandbox_host::learn
