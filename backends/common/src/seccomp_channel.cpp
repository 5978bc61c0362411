#include <sandbox_host/backends/seccomp_channel.hpp>

#include <sandbox_host/backends/setup_error.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

namespace sandbox_host::backends {
SeccompChannel SeccompChannel::take_from_environment() {
  const std::string name(kEnvSeccompChannel);
  const char *raw = ::getenv(name.c_str());
  if (raw == nullptr) return {};
  const std::string value = raw;
  ::unsetenv(name.c_str());
  std::string_view number = value;
  SeccompChannel channel;
  channel.verdicts_ = Verdicts::notify;
  if (number.ends_with(kSeccompLearnSuffix)) {
    number.remove_suffix(kSeccompLearnSuffix.size());
    channel.verdicts_ = Verdicts::notify_and_trace;
  }
  int fd = -1;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), fd);
  struct stat st {};
  if (number.empty() || error != std::errc() || end != number.data() + number.size() || fd < 3 ||
      ::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    throw SetupError("seccomp", name + "=\"" + value +
                                    "\" names no inherited socket (the host sets \"<fd>\" "
                                    "or \"<fd> learn\")");
  }
  channel.fd_ = fd;
  return channel;
}

SeccompChannel::SeccompChannel(SeccompChannel &&other) noexcept
    : fd_(std::exchange(other.fd_, -1)), verdicts_(other.verdicts_) {}

SeccompChannel &SeccompChannel::operator=(SeccompChannel &&other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    verdicts_ = other.verdicts_;
  }
  return *this;
}

SeccompChannel::~SeccompChannel() {
  close();
}

void SeccompChannel::hand_over(int listener) {
  char byte = kListenerWord;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr *rights = CMSG_FIRSTHDR(&message);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(rights), &listener, sizeof(int));
  ssize_t sent;
  do {
    sent = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != 1) throw_errno("seccomp", "hand the listener to the host");
  close();
}

void SeccompChannel::decline(int error) noexcept {
  const std::string word = kDeclinedWord + std::to_string(error);
  (void)!::send(fd_, word.data(), word.size(), MSG_NOSIGNAL);
  close();
}

void SeccompChannel::close() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

}  // namespace sandbox_host::backends
