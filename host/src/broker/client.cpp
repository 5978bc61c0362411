#include <sandbox_host/host/broker/client.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>

namespace sandbox_host::broker {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting client looks whether the broker still lives.
constexpr std::chrono::milliseconds kLivenessCheck{100};

std::string system_error_text(int error) {
  return std::system_category().message(error);
}

std::string random_id() {
  std::array<unsigned char, 16> bytes{};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "getrandom");
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 0xf]);
  }
  return id;
}

// Collects frames into an answer until the last one.
class Collector {
 public:
  explicit Collector(const AskOptions &options) : options_(options) {}
  // Takes one frame; true once it was the last.
  bool take(std::string_view json) {
    ReplyFrame frame;
    try {
      frame = parse_frame(json);
    } catch (const RequestError &e) {
      throw NoBroker(std::string("the broker sent a malformed reply: ") + e.what());
    }
    for (auto [bytes, is_err] : {std::pair{&frame.out, false}, {&frame.err, true}}) {
      if (bytes->empty()) continue;
      if (options_.on_output) {
        options_.on_output(*bytes, is_err);
      } else {
        (is_err ? answer_.err : answer_.out).append(*bytes);
      }
    }
    if (!frame.end) return false;
    answer_.code = frame.code;
    if (!frame.error.empty()) {
      throw Refused(frame.error, std::move(answer_.out), std::move(answer_.err), frame.code);
    }
    return true;
  }
  Answer &answer() { return answer_; }

 private:
  const AskOptions &options_;
  Answer answer_;
};

// Whether a broker holds the spool's lock (an OFD write lock, tested, not taken).
bool broker_serves(int spool_fd) {
  const UniqueFd lock(::openat(spool_fd, kBrokerLockFile, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!lock) return false;
  struct flock probe {};
  probe.l_type = F_RDLCK;
  probe.l_whence = SEEK_SET;
  return ::fcntl(lock.get(), F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
}

// The names this ask made in the spool; removed again unless the broker took them.
class SpoolEntries {
 public:
  SpoolEntries(int spool_fd, std::string id) : spool_fd_(spool_fd), id_(std::move(id)) {}
  ~SpoolEntries() {
    for (const auto &suffix : {kRequestSuffix, kReplySuffix, kPartialSuffix}) {
      const std::string name = (suffix == kPartialSuffix ? "." : "") + id_ + std::string(suffix);
      ::unlinkat(spool_fd_, name.c_str(), 0);
    }
  }
  SpoolEntries(const SpoolEntries &) = delete;
  SpoolEntries &operator=(const SpoolEntries &) = delete;
  std::string name(std::string_view suffix) const {
    return (suffix == kPartialSuffix ? "." : "") + id_ + std::string(suffix);
  }

 private:
  int spool_fd_;
  std::string id_;
};

void write_all(int fd, std::string_view bytes) {
  for (std::size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "writing the request");
    at += static_cast<std::size_t>(n);
  }
}

}  // namespace

NoBroker::NoBroker(const std::string &why)
    : std::runtime_error("no sandbox-host broker answered: " + why) {}

Refused::Refused(const std::string &error, std::string out, std::string err, int code)
    : std::runtime_error(error), out(std::move(out)), err(std::move(err)), code(code) {}

Answer ask(const fs::path &spool, const Request &request, const AskOptions &options) {
  const UniqueFd dir(::open(spool.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) throw NoBroker("cannot open spool " + spool.string() + ": " + system_error_text(errno));
  if (!broker_serves(dir.get())) throw NoBroker("no broker serves " + spool.string());

  SpoolEntries entries(dir.get(), random_id());
  const std::string reply_name = entries.name(kReplySuffix);
  if (::mkfifoat(dir.get(), reply_name.c_str(), 0600) != 0) {
    throw std::system_error(errno, std::generic_category(), "mkfifo " + reply_name);
  }
  // Open before the request exists, so the broker finds a reader there.
  const UniqueFd reply(::openat(dir.get(), reply_name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!reply) throw std::system_error(errno, std::generic_category(), "open " + reply_name);

  const std::string partial = entries.name(kPartialSuffix);
  const UniqueFd file(::openat(dir.get(), partial.c_str(),
                               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!file) throw std::system_error(errno, std::generic_category(), "create " + partial);
  write_all(file.get(), encode_request(request));
  // The lock names this process to the broker, in the broker's pid namespace.
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(file.get(), F_SETLK, &lock) != 0) {
    throw std::system_error(errno, std::generic_category(), "lock " + partial);
  }
  if (::renameat2(dir.get(), partial.c_str(), dir.get(), entries.name(kRequestSuffix).c_str(),
                  RENAME_NOREPLACE) != 0) {
    throw std::system_error(errno, std::generic_category(), "rename " + partial);
  }

  Collector collector(options);
  std::string pending;
  std::array<char, 65536> buffer{};
  const auto deadline = Clock::now() + options.timeout;
  bool taken = false;
  for (;;) {
    pollfd ready{reply.get(), POLLIN, 0};
    ::poll(&ready, 1, static_cast<int>(kLivenessCheck.count()));
    const ssize_t n = ::read(reply.get(), buffer.data(), buffer.size());
    if (n > 0) {
      taken = true;
      pending.append(buffer.data(), static_cast<std::size_t>(n));
      for (std::size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
        const bool last = collector.take(std::string_view(pending).substr(0, newline));
        pending.erase(0, newline + 1);
        if (last) return std::move(collector.answer());
      }
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      throw NoBroker("reading the reply: " + system_error_text(errno));
    }
    // The broker unlinks a request when it takes it.
    struct stat status {};
    if (!taken && ::fstat(file.get(), &status) == 0 && status.st_nlink == 0) taken = true;
    if (n == 0 && (ready.revents & POLLHUP) != 0) {
      throw NoBroker("the broker closed the reply without answering (it exited or was killed)");
    }
    if (!broker_serves(dir.get()))
      throw NoBroker("the broker serving " + spool.string() + " exited");
    if (!taken && Clock::now() >= deadline) {
      throw NoBroker("no broker took the request within " +
                     std::to_string(options.timeout.count()) + " ms");
    }
  }
}

Answer ask_socket(const fs::path &socket, const Request &request, const AskOptions &options) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.native().size() >= sizeof(address.sun_path)) {
    throw NoBroker("socket path " + socket.string() + " is too long");
  }
  std::memcpy(address.sun_path, socket.c_str(), socket.native().size() + 1);
  const UniqueFd fd(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!fd) throw std::system_error(errno, std::generic_category(), "socket");
  if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    throw NoBroker("cannot connect to " + socket.string() + ": " + system_error_text(errno));
  }
  const std::string message = encode_request(request);
  if (::send(fd.get(), message.data(), message.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(message.size())) {
    throw NoBroker("sending the request to " + socket.string() + ": " + system_error_text(errno));
  }
  Collector collector(options);
  std::string frame(256 * 1024, '\0');
  bool answering = false;
  const auto deadline = Clock::now() + options.timeout;
  for (;;) {
    pollfd ready{fd.get(), POLLIN, 0};
    const int wait =
        answering ? -1
                  : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(
                                         std::max(deadline - Clock::now(), Clock::duration::zero()))
                                         .count());
    if (::poll(&ready, 1, wait) == 0) {
      throw NoBroker("no answer from " + socket.string() + " within " +
                     std::to_string(options.timeout.count()) + " ms");
    }
    const ssize_t n = ::recv(fd.get(), frame.data(), frame.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw NoBroker("the broker closed " + socket.string() + " without answering");
    answering = true;
    if (collector.take(std::string_view(frame.data(), static_cast<std::size_t>(n)))) {
      return std::move(collector.answer());
    }
  }
}

}  // namespace sandbox_host::broker
