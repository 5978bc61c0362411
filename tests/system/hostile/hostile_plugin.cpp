// A plugin written by an attacker, for tests/system/hostile: each mode is one attack on the host
// side of the sandbox, run inside a real sandbox as the launching user. It prints what it
// got on stdout, one line, so that the test can tell an attack that failed from one that
// never ran.
//
//   hostile_plugin launch SOCKET BACKEND NETWORK -- COMMAND...
//       ask the launch service at SOCKET to run COMMAND (BACKEND "-": the service's choice);
//       prints "launch: <status>" (125: the service refused, the reason on stderr)
//   hostile_plugin launch-loop SOCKET COUNT
//       asks the launch service at SOCKET COUNT times to run /bin/true, as fast as it
//       answers; prints "refused: <how many times>"
//   hostile_plugin clone-parent COUNT
//       makes COUNT children with clone(CLONE_PARENT), each exiting at once, so that they
//       become children of whoever launched this plugin; prints "clone-parent: <made>"
//   hostile_plugin hold SOCKET COUNT SECONDS
//       holds COUNT idle connections to SOCKET for SECONDS; prints "hold: <connected>"
//   hostile_plugin swap DIR TARGET
//       replaces DIR, a directory it was granted, with a symlink to TARGET, for the next
//       launch that is given DIR; prints "swap: done" or the error
//   hostile_plugin read FILE
//       prints "read: <contents>" or "read: <error>"
//   hostile_plugin dirs COUNT FILL_MIB
//       makes COUNT directories below $TMPDIR, prints "dirs: <made>", then writes FILL_MIB
//       MiB into a file in the last one and sleeps: each directory would cost the host an
//       inotify watch, and the bytes must still be counted
//   hostile_plugin hide COUNT MIB
//       COUNT times: writes MIB MiB to a file in $TMPDIR, maps all of it shared, removes its
//       name and closes its descriptor, so that the mapping alone keeps the bytes on the
//       disk; prints "hidden" and sleeps
//   hostile_plugin flight COUNT MIB
//       COUNT times: writes MIB MiB to a file in $TMPDIR, removes its name, sends its
//       descriptor into a socketpair's queue and closes it; then sends that queue's socket
//       into a second pair's queue and closes it, so that one socket it holds shows one
//       descriptor in flight and the bytes are kept by none it can see; prints "in flight"
//       and sleeps
//   hostile_plugin pass COUNT
//       COUNT times, 5 ms apart: sends a descriptor of its own through a socketpair and
//       receives it at once, as a plugin that hands descriptors between its parts does;
//       prints "passed: <received>" and exits
//   hostile_plugin egress SOCKET HOST
//       asks the egress proxy at the unix socket SOCKET for http://HOST/headers; prints
//       "egress: <the answer's first line>" or "egress: closed unanswered"
//   hostile_plugin scrape ADDRESS COUNT
//       COUNT times: connects to the metrics endpoint at ADDRESS ("unix:PATH" or
//       "tcp:127.0.0.1:PORT"), asks GET /metrics and reads the answer; prints "scrape:
//       <answered> answered, <bytes> bytes" (an answer is any byte received)
//   hostile_plugin scrape-hold ADDRESS COUNT SECONDS
//       opens COUNT connections to ADDRESS, sends each the first line of a request and no
//       more, and holds them SECONDS; prints "scrape-hold: <connected>"
#include <sandbox_host/host/launch_client/launch_client.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int launch(int argc, char **argv) {
  if (argc < 7 || std::string(argv[5]) != "--") {
    std::fprintf(stderr, "usage: launch SOCKET BACKEND NETWORK -- COMMAND...\n");
    return 2;
  }
  sandbox_host::LaunchOptions options;
  if (std::string(argv[3]) != "-") options.backend = argv[3];
  options.network = argv[4];
  for (int i = 6; i < argc; ++i) options.command.emplace_back(argv[i]);
  int status = 0;
  try {
    status = sandbox_host::launch_via("hostile_plugin", argv[2],
                                      sandbox_host::make_launch_request(options));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "hostile_plugin: %s\n", e.what());
    status = 125;
  }
  std::printf("launch: %d\n", status);
  return 0;
}

int launch_loop(const char *socket, int count) {
  sandbox_host::LaunchOptions options;
  options.command = {"/bin/true"};
  int refused = 0;
  for (int i = 0; i < count; ++i) {
    try {
      if (sandbox_host::launch_via("hostile_plugin", socket,
                                   sandbox_host::make_launch_request(options)) == 125) {
        ++refused;
      }
    } catch (const std::exception &) {
      ++refused;
    }
  }
  std::printf("refused: %d\n", refused);
  return 0;
}

int clone_parent(int count) {
  int made = 0;
  for (int i = 0; i < count; ++i) {
    const long pid = ::syscall(SYS_clone, CLONE_PARENT, nullptr, nullptr, nullptr, 0);
    if (pid == 0) ::_exit(0);
    if (pid > 0) ++made;
  }
  std::printf("clone-parent: %d\n", made);
  std::fflush(stdout);
  // Time for every child to have exited before this plugin does.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  return 0;
}

int hold(const char *path, int count, int seconds) {
  std::vector<int> held;
  for (int i = 0; i < count; ++i) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
      ::close(fd);
      continue;
    }
    held.push_back(fd);
  }
  std::printf("hold: %zu\n", held.size());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return 0;
}

int swap(const std::string &dir, const std::string &target) {
  const std::string aside = dir + ".old";
  if (::rename(dir.c_str(), aside.c_str()) != 0 || ::symlink(target.c_str(), dir.c_str()) != 0) {
    std::printf("swap: %s\n", std::strerror(errno));
  } else {
    std::printf("swap: done\n");
  }
  return 0;
}

int read_file(const char *path) {
  FILE *file = std::fopen(path, "r");
  if (file == nullptr) {
    std::printf("read: %s\n", std::strerror(errno));
    return 0;
  }
  char buffer[256] = {};
  const std::size_t size = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  std::printf("read: %.*s\n", static_cast<int>(size), buffer);
  return 0;
}

int egress(const char *path, const std::string &host) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path, sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    std::printf("egress: connect: %s\n", std::strerror(errno));
    return 0;
  }
  const std::string request =
      "GET http://" + host + "/headers HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  // A proxy that refuses closes at once: the request then meets a closed socket.
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
          static_cast<ssize_t>(request.size()) &&
      errno != EPIPE && errno != ECONNRESET) {
    std::printf("egress: send: %s\n", std::strerror(errno));
    return 0;
  }
  std::string answer;
  char buffer[4096];
  for (ssize_t n;
       answer.find('\n') == std::string::npos && (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  if (answer.empty()) {
    std::printf("egress: closed unanswered\n");
  } else {
    std::printf("egress: %s\n", answer.substr(0, answer.find_first_of("\r\n")).c_str());
  }
  return 0;
}

// A connected socket to "unix:PATH" or "tcp:ADDRESS:PORT" (IPv4), or -1.
int connect_to(const std::string &address) {
  if (address.starts_with("unix:")) {
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strncpy(un.sun_path, address.c_str() + 5, sizeof un.sun_path - 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr *>(&un), sizeof un) == 0) return fd;
    if (fd >= 0) ::close(fd);
    return -1;
  }
  const std::string host_port = address.substr(4);
  const auto colon = host_port.rfind(':');
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<std::uint16_t>(std::stoi(host_port.substr(colon + 1))));
  ::inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &in.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr *>(&in), sizeof in) == 0) return fd;
  if (fd >= 0) ::close(fd);
  return -1;
}

int scrape(const std::string &address, int count) {
  int answered = 0;
  std::size_t bytes = 0;
  const std::string request = "GET /metrics HTTP/1.1\r\nHost: metrics\r\n\r\n";
  for (int i = 0; i < count; ++i) {
    const int fd = connect_to(address);
    if (fd < 0) continue;
    // A refused peer is closed at once: the request may meet a closed socket.
    [[maybe_unused]] const auto sent = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    char buffer[4096];
    std::size_t got = 0;
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
      got += static_cast<std::size_t>(n);
    ::close(fd);
    if (got > 0) ++answered;
    bytes += got;
  }
  std::printf("scrape: %d answered, %zu bytes\n", answered, bytes);
  return 0;
}

int scrape_hold(const std::string &address, int count, int seconds) {
  std::vector<int> held;
  for (int i = 0; i < count; ++i) {
    const int fd = connect_to(address);
    if (fd < 0) continue;
    [[maybe_unused]] const auto sent = ::send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
    held.push_back(fd);
  }
  std::printf("scrape-hold: %zu\n", held.size());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  return 0;
}

int dirs(int count, int fill_mib) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string base = std::string(tmp != nullptr ? tmp : "/tmp") + "/d";
  ::mkdir(base.c_str(), 0700);
  int made = 0;
  std::string last = base;
  for (int i = 0; i < count; ++i) {
    const std::string dir = base + "/" + std::to_string(i);
    if (::mkdir(dir.c_str(), 0700) == 0) {
      ++made;
      last = dir;
    }
  }
  std::printf("dirs: %d\n", made);
  std::fflush(stdout);
  // A count or two, so that the host has found every directory before the bytes come.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  FILE *file = std::fopen((last + "/fill").c_str(), "w");
  std::vector<char> mib(1 << 20, 'x');
  for (int i = 0; file != nullptr && i < fill_mib; ++i)
    std::fwrite(mib.data(), 1, mib.size(), file);
  if (file != nullptr) std::fclose(file);
  std::printf("filled\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(30));
  return 0;
}

int hide(int count, int mib) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/hidden";
  const std::size_t size = static_cast<std::size_t>(mib) << 20;
  std::vector<char> chunk(1 << 20, 'x');
  for (int file = 0; file < count; ++file) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    for (int i = 0; fd >= 0 && i < mib; ++i) {
      if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) break;
    }
    void *mapped = fd < 0 ? MAP_FAILED : ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED || ::unlink(path.c_str()) != 0) {
      std::printf("hide: %s\n", std::strerror(errno));
      return 0;
    }
    ::close(fd);
    // Each file under the bound while it has a name, for a count to find it so.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  std::printf("hidden\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(30));
  return 0;
}

// One byte of data, with room beside it for one descriptor.
struct OneByteMessage {
  OneByteMessage() {
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  OneByteMessage(const OneByteMessage &) = delete;
  OneByteMessage &operator=(const OneByteMessage &) = delete;

  char byte = 'x';
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
};

bool send_descriptor(int socket, int fd) {
  OneByteMessage message;
  cmsghdr *rights = CMSG_FIRSTHDR(&message.header);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(rights), &fd, sizeof fd);
  return ::sendmsg(socket, &message.header, 0) == 1;
}

int receive_descriptor(int socket) {
  OneByteMessage message;
  if (::recvmsg(socket, &message.header, MSG_CMSG_CLOEXEC) != 1) return -1;
  const cmsghdr *rights = CMSG_FIRSTHDR(&message.header);
  if (rights == nullptr || rights->cmsg_type != SCM_RIGHTS) return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(rights), sizeof fd);
  return fd;
}

int flight(int count, int mib) {
  const char *tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/in-flight";
  int queue[2], outer[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, queue) != 0 ||
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, outer) != 0) {
    std::printf("flight: %s\n", std::strerror(errno));
    return 0;
  }
  std::vector<char> chunk(1 << 20, 'x');
  for (int file = 0; file < count; ++file) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    for (int i = 0; fd >= 0 && i < mib; ++i) {
      if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) break;
    }
    if (fd < 0 || ::unlink(path.c_str()) != 0 || !send_descriptor(queue[0], fd)) {
      std::printf("flight: %s\n", std::strerror(errno));
      return 0;
    }
    ::close(fd);
    // Each file under the bound while it has a name, for a count to find it so.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  if (!send_descriptor(outer[0], queue[1])) {
    std::printf("flight: %s\n", std::strerror(errno));
    return 0;
  }
  ::close(queue[0]);
  ::close(queue[1]);
  ::close(outer[0]);
  std::printf("in flight\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(30));
  return 0;
}

int pass(int count) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    std::printf("pass: %s\n", std::strerror(errno));
    return 0;
  }
  int received = 0;
  for (int i = 0; i < count; ++i) {
    if (!send_descriptor(pair[0], STDOUT_FILENO)) break;
    const int fd = receive_descriptor(pair[1]);
    if (fd < 0) break;
    ::close(fd);
    ++received;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::printf("passed: %d\n", received);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "launch") return launch(argc, argv);
  if (mode == "launch-loop" && argc == 4) return launch_loop(argv[2], std::stoi(argv[3]));
  if (mode == "clone-parent" && argc == 3) return clone_parent(std::stoi(argv[2]));
  if (mode == "hold" && argc == 5) return hold(argv[2], std::stoi(argv[3]), std::stoi(argv[4]));
  if (mode == "swap" && argc == 4) return swap(argv[2], argv[3]);
  if (mode == "read" && argc == 3) return read_file(argv[2]);
  if (mode == "egress" && argc == 4) return egress(argv[2], argv[3]);
  if (mode == "scrape" && argc == 4) return scrape(argv[2], std::stoi(argv[3]));
  if (mode == "scrape-hold" && argc == 5) {
    return scrape_hold(argv[2], std::stoi(argv[3]), std::stoi(argv[4]));
  }
  if (mode == "dirs" && argc == 4) return dirs(std::stoi(argv[2]), std::stoi(argv[3]));
  if (mode == "flight" && argc == 4) return flight(std::stoi(argv[2]), std::stoi(argv[3]));
  if (mode == "pass" && argc == 3) return pass(std::stoi(argv[2]));
  if (mode == "hide" && argc == 4) return hide(std::stoi(argv[2]), std::stoi(argv[3]));
  std::fprintf(stderr, "hostile_plugin: unknown mode; see the comment at the top\n");
  return 2;
}
