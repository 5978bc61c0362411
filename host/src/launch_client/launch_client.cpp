#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_client/launch_client.hpp>
#include <sandbox_host/host/launch_client/launch_frames.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <system_error>

extern char **environ;

// No iostreams and no std::filesystem here: this is most of sandbox-host-launch, whose
// start-up is part of every launch through the service.
namespace sandbox_host {
namespace {

std::string resolved(const std::string &path, const char *what) {
  char canonical[PATH_MAX];
  if (::realpath(path.c_str(), canonical) == nullptr) {
    throw std::runtime_error(std::string(what) + " " + path + ": " + std::strerror(errno));
  }
  return canonical;
}

// A directory the plugin writes, as the caller names it: absolute, and refused when any of
// its components is a symlink, which a plugin of an earlier launch could have put there
// (TmpDir = SocketDir/tmp, kept across launches, made a symlink to another directory).
std::string unlinked_directory(const std::string &path, const char *what) {
  std::string absolute = path;
  if (path.empty() || path.front() != '/') {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      throw std::runtime_error(std::string(what) + " " + path +
                               ": getcwd: " + std::strerror(errno));
    }
    absolute = std::string(cwd) + "/" + path;
  }
  for (std::size_t end = absolute.find('/', 1);; end = absolute.find('/', end + 1)) {
    const std::string prefix = absolute.substr(0, end);
    struct stat status {};
    if (::lstat(prefix.c_str(), &status) == 0 && S_ISLNK(status.st_mode)) {
      throw std::runtime_error(std::string(what) + " " + path + ": " + prefix +
                               " is a symbolic link; a directory a plugin writes is never "
                               "reached through one, since a plugin of an earlier launch could "
                               "have made it (name the directory itself)");
    }
    if (end == std::string::npos) break;
  }
  return resolved(absolute, what);
}

bool executable_file(const std::string &path) {
  struct stat status {};
  return ::access(path.c_str(), X_OK) == 0 && ::stat(path.c_str(), &status) == 0 &&
         S_ISREG(status.st_mode);
}

// A command named without a slash is looked up in PATH, as a shell does. By hand rather
// than with Boost.Process's find_executable: this file is linked into the wholly static
// sandbox-host-launch, whose start-up is part of every launch through the service, and
// Boost.Process would bring Asio and its filesystem layer into it for this one loop.
std::string command_binary(const std::string &name) {
  if (name.find('/') != std::string::npos) return resolved(name, "plugin binary");
  const char *path = ::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty() || dir.front() != '/') continue;
    std::string candidate(dir);
    if (candidate.back() != '/') candidate += '/';
    candidate += name;
    if (executable_file(candidate)) return resolved(candidate, "plugin binary");
  }
  throw std::runtime_error("command " + name + ": not found in PATH");
}

UniqueFd connect_to(const std::string &socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.empty() || socket.size() >= sizeof address.sun_path) {
    throw std::runtime_error("not a unix socket path (1 to " +
                             std::to_string(sizeof address.sun_path - 1) + " bytes)");
  }
  std::memcpy(address.sun_path, socket.data(), socket.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) throw std::system_error(errno, std::generic_category(), "socket");
  int connected;
  do {
    connected = ::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address);
  } while (connected != 0 && errno == EINTR);
  if (connected != 0) {
    throw std::system_error(errno, std::generic_category(), "connect");
  }
  return fd;
}

// The caller's stdio as the plugin gets it; one the caller has closed is /dev/null, as a
// shell's child would find it unusable either way.
std::array<UniqueFd, 3> caller_stdio() {
  std::array<UniqueFd, 3> stdio;
  for (int fd = 0; fd < 3; ++fd) {
    stdio[fd] = UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!stdio[fd]) stdio[fd] = UniqueFd(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!stdio[fd]) throw std::system_error(errno, std::generic_category(), "open /dev/null");
  }
  return stdio;
}

}  // namespace

void write_text(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written <= 0) return;
    text.remove_prefix(static_cast<size_t>(written));
  }
}

LaunchRequest make_launch_request(const LaunchOptions &options) {
  if (options.command.empty()) throw std::runtime_error("no plugin binary named");
  LaunchRequest request;
  Spec &spec = request.spec;
  spec.binary_path = command_binary(options.command.front());
  spec.args.assign(options.command.begin() + 1, options.command.end());
  spec.plugin_name = options.name.value_or("");
  if (options.network) {
    const auto network = parse_network(*options.network);
    if (!network) {
      throw std::runtime_error("--network " + *options.network +
                               ": not a network; allowed: none, outbound, proxied");
    }
    spec.network = *network;
    request.network_given = true;
  }
  if (options.socket_dir) spec.socket_dir = unlinked_directory(*options.socket_dir, "--socket-dir");
  if (options.tmp_dir) spec.tmp_dir = unlinked_directory(*options.tmp_dir, "--tmp-dir");
  for (const auto &path : options.read) spec.read_paths.push_back(resolved(path, "--read"));
  try {
    for (const auto &entry : options.env) check_env_entry(entry, "--env");
    if (options.handshake) check_env_entry(*options.handshake, "--handshake");
  } catch (const std::invalid_argument &e) {
    throw std::runtime_error(e.what());
  }
  request.backend = options.backend;
  request.env = {options.env, options.handshake};
  for (char **entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    request.caller_env.emplace_back(*entry);
  }
  return request;
}

sigset_t forwarded_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&set, sig);
  return set;
}

int launch_via(const std::string &program, const std::string &socket,
               const LaunchRequest &request) {
  const std::string fail_prefix = program + ": launch service " + socket + ": ";
  try {
    // Blocked for as long as they are read from signal_fd, then as before.
    struct BlockedSignals {
      sigset_t previous;
      explicit BlockedSignals(const sigset_t &signals) {
        ::sigprocmask(SIG_BLOCK, &signals, &previous);
      }
      ~BlockedSignals() { ::sigprocmask(SIG_SETMASK, &previous, nullptr); }
    };
    const sigset_t signals = forwarded_signals();
    const BlockedSignals blocked(signals);
    UniqueFd signal_fd(::signalfd(-1, &signals, SFD_CLOEXEC));
    if (!signal_fd) throw std::system_error(errno, std::generic_category(), "signalfd");
    // Ready before the connection: the service's thread then reads the request at once,
    // instead of waiting for it.
    const std::string encoded = encode_launch_request(request);
    UniqueFd service;
    {
      const std::array<UniqueFd, 3> stdio = caller_stdio();
      const std::array<int, 3> fds{stdio[0].get(), stdio[1].get(), stdio[2].get()};
      service = connect_to(socket);
      try {
        send_frame(service.get(), encoded, fds);
      } catch (const std::system_error &) {
        // A service that refused at once (busy, another uid) closed before reading; its
        // refusal may wait to be read.
        std::optional<Frame> frame;
        try {
          frame = receive_frame(service.get(), kMaxSmallFrame);
        } catch (const std::exception &) {
        }
        if (frame) {
          const LaunchReply reply = decode_reply(frame->body);
          if (reply.kind == LaunchReply::Kind::refused) {
            write_text(STDERR_FILENO, fail_prefix + reply.reason + "\n");
            return kHostFailure;
          }
        }
        throw;
      }
    }
    for (;;) {
      std::array<pollfd, 2> fds{pollfd{service.get(), POLLIN, 0},
                                pollfd{signal_fd.get(), POLLIN, 0}};
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "poll");
      }
      if (fds[1].revents != 0) {
        signalfd_siginfo info{};
        if (::read(signal_fd.get(), &info, sizeof info) == sizeof info) {
          try {
            send_frame(service.get(), encode_signal(static_cast<int>(info.ssi_signo)));
          } catch (const std::system_error &) {
            // The service is gone; the next read says so.
          }
        }
      }
      if (fds[0].revents == 0) continue;
      const std::optional<Frame> frame = receive_frame(service.get(), kMaxSmallFrame);
      if (!frame) {
        throw std::runtime_error(
            "the launch service closed the connection before the plugin's "
            "exit status");
      }
      const LaunchReply reply = decode_reply(frame->body);
      if (reply.kind == LaunchReply::Kind::refused) {
        write_text(STDERR_FILENO, fail_prefix + reply.reason + "\n");
        return kHostFailure;
      }
      if (reply.kind == LaunchReply::Kind::exited) {
        if (!reply.death.empty()) write_text(STDERR_FILENO, reply.death + "\n");
        return reply.signal != 0 ? 128 + reply.signal : reply.code;
      }
    }
  } catch (const std::exception &e) {
    write_text(STDERR_FILENO, fail_prefix + e.what() + "\n");
    return kHostFailure;
  }
}

}  // namespace sandbox_host
