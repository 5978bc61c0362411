#include <sandbox_host/host/launch_client/launch_frames.hpp>

#include <boost/json.hpp>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <system_error>

namespace sandbox_host {
namespace json = boost::json;
namespace {

constexpr std::size_t kHeader = 4;
constexpr std::size_t kMaxFds = 8;

using Clock = std::chrono::steady_clock;

// Waits for the socket to be readable; false: deadline passed.
bool wait_readable(int socket, const std::optional<Clock::time_point> &deadline) {
  for (;;) {
    int timeout = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      timeout = static_cast<int>(std::clamp<long>(left.count(), 0, INT_MAX));
    }
    pollfd fd{socket, POLLIN, 0};
    const int polled = ::poll(&fd, 1, timeout);
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) throw std::system_error(errno, std::generic_category(), "poll");
    return polled > 0;
  }
}

// Reads into buffer until it is full; returns how many bytes came before the peer closed.
std::size_t read_full(int socket, char *buffer, std::size_t size, std::vector<UniqueFd> *fds,
                      const std::optional<Clock::time_point> &deadline) {
  std::size_t got = 0;
  while (got < size) {
    if (!wait_readable(socket, deadline)) throw FrameError("the frame did not arrive in time");
    iovec data{buffer + got, size - got};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> control{};
    msghdr header{};
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    if (fds != nullptr) {
      header.msg_control = control.data();
      header.msg_controllen = control.size();
    }
    const ssize_t n = ::recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "receive");
    for (cmsghdr *c = CMSG_FIRSTHDR(&header); fds != nullptr && c != nullptr;
         c = CMSG_NXTHDR(&header, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds->emplace_back(fd);
      }
    }
    if ((header.msg_flags & MSG_CTRUNC) != 0) {
      throw FrameError("more than " + std::to_string(kMaxFds) + " descriptors with a frame");
    }
    if (n == 0) return got;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

const json::object &object_of(const json::value &value) {
  if (!value.is_object()) throw FrameError("not a JSON object");
  return value.get_object();
}

json::value parse(std::string_view text) {
  boost::system::error_code error;
  json::value value = json::parse(text, error);
  if (error) throw FrameError("not JSON: " + error.message());
  return value;
}

std::int64_t integer(const json::object &object, const char *name) {
  const json::value *value = object.if_contains(name);
  if (value == nullptr || !value->is_int64()) {
    throw FrameError(std::string("field \"") + name + "\" is not an integer");
  }
  return value->get_int64();
}

}  // namespace

void send_frame(int socket, std::string_view body, std::span<const int> fds) {
  if (body.size() > UINT32_MAX) throw std::length_error("frame over 4 GiB");
  const auto size = static_cast<std::uint32_t>(body.size());
  const std::array<unsigned char, kHeader> header_bytes{
      static_cast<unsigned char>(size >> 24), static_cast<unsigned char>(size >> 16),
      static_cast<unsigned char>(size >> 8), static_cast<unsigned char>(size)};
  std::array<iovec, 2> parts{iovec{const_cast<unsigned char *>(header_bytes.data()), kHeader},
                             iovec{const_cast<char *>(body.data()), body.size()}};
  alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * kMaxFds)> control{};
  if (fds.size() > kMaxFds) throw std::length_error("too many descriptors for one frame");
  std::size_t sent_total = 0;
  const std::size_t total = kHeader + body.size();
  bool rights_sent = fds.empty();
  while (sent_total < total) {
    // The parts not yet sent.
    std::array<iovec, 2> rest{};
    std::size_t count = 0, skip = sent_total;
    for (const iovec &part : parts) {
      if (skip >= part.iov_len) {
        skip -= part.iov_len;
        continue;
      }
      rest[count++] = {static_cast<char *>(part.iov_base) + skip, part.iov_len - skip};
      skip = 0;
    }
    msghdr header{};
    header.msg_iov = rest.data();
    header.msg_iovlen = count;
    if (!rights_sent) {
      header.msg_control = control.data();
      header.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr *rights = CMSG_FIRSTHDR(&header);
      rights->cmsg_level = SOL_SOCKET;
      rights->cmsg_type = SCM_RIGHTS;
      rights->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(rights), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t sent = ::sendmsg(socket, &header, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) throw std::system_error(errno, std::generic_category(), "send");
    rights_sent = true;
    sent_total += static_cast<std::size_t>(sent);
  }
}

std::optional<Frame> receive_frame(int socket, std::size_t max_bytes,
                                   std::optional<Clock::time_point> deadline) {
  Frame frame;
  std::array<char, kHeader> header{};
  const std::size_t got = read_full(socket, header.data(), kHeader, &frame.fds, deadline);
  if (got == 0 && frame.fds.empty()) return std::nullopt;
  if (got < kHeader) throw FrameError("the connection closed inside a frame's length");
  const std::size_t size = (std::size_t{static_cast<unsigned char>(header[0])} << 24) |
                           (std::size_t{static_cast<unsigned char>(header[1])} << 16) |
                           (std::size_t{static_cast<unsigned char>(header[2])} << 8) |
                           std::size_t{static_cast<unsigned char>(header[3])};
  if (size > max_bytes) {
    throw FrameError("a frame of " + std::to_string(size) + " bytes, over the bound of " +
                     std::to_string(max_bytes));
  }
  frame.body.resize(size);
  if (read_full(socket, frame.body.data(), size, &frame.fds, deadline) < size) {
    throw FrameError("the connection closed inside a frame of " + std::to_string(size) + " bytes");
  }
  return frame;
}

std::string encode_reply(const LaunchReply &reply) {
  json::object object;
  switch (reply.kind) {
    case LaunchReply::Kind::started:
      object["started"] = reply.pid;
      break;
    case LaunchReply::Kind::exited:
      object["exited"] = json::object{{"code", reply.code}, {"signal", reply.signal}};
      if (!reply.death.empty()) object["exited"].as_object()["death"] = reply.death;
      break;
    case LaunchReply::Kind::refused:
      object["refused"] = reply.reason;
      break;
  }
  return json::serialize(object);
}

LaunchReply decode_reply(std::string_view text) {
  const json::value value = parse(text);
  const json::object &object = object_of(value);
  LaunchReply reply;
  if (object.contains("started")) {
    reply.kind = LaunchReply::Kind::started;
    reply.pid = static_cast<pid_t>(integer(object, "started"));
  } else if (const json::value *exited = object.if_contains("exited")) {
    reply.kind = LaunchReply::Kind::exited;
    const json::object &status = object_of(*exited);
    reply.code = static_cast<int>(integer(status, "code"));
    reply.signal = static_cast<int>(integer(status, "signal"));
    if (const json::value *death = status.if_contains("death")) {
      if (!death->is_string()) throw FrameError("field \"death\" is not a string");
      reply.death = std::string(death->get_string());
    }
  } else if (const json::value *refused = object.if_contains("refused")) {
    if (!refused->is_string()) throw FrameError("field \"refused\" is not a string");
    reply.kind = LaunchReply::Kind::refused;
    reply.reason = std::string(refused->get_string());
  } else {
    throw FrameError("a reply with none of started, exited, refused");
  }
  return reply;
}

std::string encode_signal(int signal) {
  return json::serialize(json::object{{"signal", signal}});
}

int decode_signal(std::string_view text) {
  const json::value value = parse(text);
  const std::int64_t signal = integer(object_of(value), "signal");
  if (signal <= 0 || signal > 64) throw FrameError("field \"signal\" is not a signal number");
  return static_cast<int>(signal);
}

}  // namespace sandbox_host
