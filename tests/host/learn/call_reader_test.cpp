// CallReader against real processes: each child makes its calls under a filter of its own
// (traced_child.hpp) and the reader reads them as the supervisor hands them over, hostile
// arguments included.
#include "traced_child.hpp"

#include <sandbox_host/backends/learn_traced_calls.hpp>
#include <sandbox_host/host/learn/call_reader.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace sandbox_host::learn {
namespace {

namespace fs = std::filesystem;
using test::run_traced;

// The learn filter's own list, so that a call the list leaves out cannot pass unnoticed.
const std::vector<const char *> kFileCalls(backends::kLearnTracedCalls.begin(),
                                           backends::kLearnTracedCalls.end());
const std::vector<const char *> kSocketCalls{"connect", "sendto", "sendmsg", "sendmmsg"};

// Everything the reader made of the child's calls.
std::vector<Attempt> attempts_of(const std::vector<const char *> &calls,
                                 const std::function<int()> &action, std::uint16_t proxy_port = 0) {
  CallReader reader(proxy_port);
  std::vector<Attempt> out;
  const auto run = run_traced(calls, action, [&](const TracedCall &call) {
    for (auto &attempt : reader.read(call)) out.push_back(std::move(attempt));
    return true;
  });
  EXPECT_EQ(run.exit_code, 0);
  return out;
}

std::vector<FileAttempt> files(const std::vector<Attempt> &attempts) {
  std::vector<FileAttempt> out;
  for (const auto &attempt : attempts) {
    if (const auto *file = std::get_if<FileAttempt>(&attempt)) out.push_back(*file);
  }
  return out;
}

bool has_file(const std::vector<Attempt> &attempts, const std::string &path, FileUse use) {
  for (const auto &file : files(attempts)) {
    if (file.path == path && file.use == use) return true;
  }
  return false;
}

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/learn-reader-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string path;
};

TEST(CallReader, ReadsAbsoluteAndRelativePathsAndTheirUse) {
  TempDir dir;
  fs::create_directory(dir.path + "/sub");
  const auto attempts = attempts_of(kFileCalls, [&] {
    if (::chdir(dir.path.c_str()) != 0) return 1;
    ::close(::open("/etc/hostname-learn-test", O_RDONLY));
    ::close(::open("sub/../sub/./file", O_WRONLY | O_CREAT, 0600));
    ::close(::open("sub/trunc", O_RDONLY | O_TRUNC | O_CREAT, 0600));
    const int sub = ::open("sub", O_RDONLY | O_DIRECTORY);
    ::close(::openat(sub, "by-dirfd", O_RDONLY));
    ::renameat2(sub, "file", AT_FDCWD, "renamed", 0);
    ::mkdirat(sub, "made", 0700);
    struct stat st {};
    ::fstatat(sub, "", &st, AT_EMPTY_PATH);  // names the descriptor alone
    ::stat("/usr//bin/", &st);
    ::access("sub", W_OK);
    char *const argv[] = {nullptr};
    ::execve("/nonexistent-learn/program", argv, argv);
    return 0;
  });
  EXPECT_TRUE(has_file(attempts, dir.path, FileUse::read));  // chdir
  EXPECT_TRUE(has_file(attempts, "/etc/hostname-learn-test", FileUse::read));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub/file", FileUse::write));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub/trunc", FileUse::write));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub/by-dirfd", FileUse::read));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub/file", FileUse::write));
  EXPECT_TRUE(has_file(attempts, dir.path + "/renamed", FileUse::write));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub/made", FileUse::write));
  EXPECT_TRUE(has_file(attempts, "/usr/bin", FileUse::look));
  EXPECT_TRUE(has_file(attempts, dir.path + "/sub", FileUse::write));  // access(W_OK)
  EXPECT_TRUE(has_file(attempts, "/nonexistent-learn/program", FileUse::exec));
  for (const auto &file : files(attempts)) {
    EXPECT_FALSE(file.path.empty());
    EXPECT_EQ(file.path.front(), '/') << file.path;
  }
}

// Memory the plugin controls: every pointer and length in it may be hostile.
TEST(CallReader, HostilePathArgumentsAreSkippedNeverFatal) {
  const long page = ::sysconf(_SC_PAGESIZE);
  const auto attempts = attempts_of(kFileCalls, [&] {
    // A null pointer and an unmapped one.
    ::syscall(SYS_openat, AT_FDCWD, nullptr, O_RDONLY);
    ::syscall(SYS_openat, AT_FDCWD, reinterpret_cast<const char *>(0xdead0000000ULL), O_RDONLY);
    ::syscall(SYS_openat, AT_FDCWD, reinterpret_cast<const char *>(~0ULL - 2), O_RDONLY);
    // 1 MiB of 'a' with no terminator, followed by an unmapped page.
    const std::size_t size = 1 << 20;
    char *area = static_cast<char *>(
        ::mmap(nullptr, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (area == MAP_FAILED) return 1;
    ::munmap(area + size, page);
    std::memset(area, 'a', size);
    ::syscall(SYS_openat, AT_FDCWD, area, O_RDONLY);
    // A short unterminated name that ends where the mapping does.
    ::syscall(SYS_openat, AT_FDCWD, area + size - 5, O_RDONLY);
    // Exactly PATH_MAX bytes before the NUL: longer than any path the kernel takes.
    area[PATH_MAX] = '\0';
    area[0] = '/';
    ::syscall(SYS_openat, AT_FDCWD, area, O_RDONLY);
    // A terminated path that straddles two pages is read whole.
    char *straddle = area + page - 3;
    std::memcpy(straddle, "/straddle", 10);
    ::syscall(SYS_openat, AT_FDCWD, straddle, O_RDONLY);
    // A relative name against a descriptor that is no directory, and one that is not open.
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return 1;
    ::syscall(SYS_openat, pipe_fds[0], "x", O_RDONLY);
    ::syscall(SYS_openat, 987, "x", O_RDONLY);
    ::syscall(SYS_renameat2, AT_FDCWD, nullptr, AT_FDCWD, "/second-only", 0);
    return 0;
  });
  const auto found = files(attempts);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].path, "/straddle");
  EXPECT_EQ(found[1].path, "/second-only");
}

TEST(CallReader, ACallWhoseThreadDiedOrWasAnsweredIsDropped) {
  CallReader reader;
  int read_after_death = -1;
  const auto run = run_traced(
      kFileCalls,
      [] {
        ::open("/learn-test-dies-here", O_RDONLY);
        return 0;
      },
      [&](const TracedCall &call) {
        ::kill(call.pid, SIGKILL);
        // Until the kernel tore the task down the memory may still
        // be readable: the pending check is what drops the call.
        for (int i = 0; i < 200 && call.still_pending(); ++i) ::usleep(5000);
        read_after_death = static_cast<int>(reader.read(call).size());
        return false;
      });
  EXPECT_EQ(run.exit_code, -1);
  EXPECT_EQ(read_after_death, 0);

  // A call answered before it was read: its memory is no longer the call's.
  std::vector<Attempt> late;
  run_traced(
      kFileCalls,
      [] {
        ::open("/learn-test-answered", O_RDONLY);
        return 0;
      },
      [&](const TracedCall &call) {
        seccomp_notif_resp response{};
        response.id = call.id;
        response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        ::ioctl(call.listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
        late = reader.read(call);
        return false;
      });
  EXPECT_TRUE(late.empty());
}

// A DNS query for name, as a stub resolver sends it.
std::string dns_query(const std::string &name) {
  std::string query("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00", 12);
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    query += static_cast<char>(dot - start);
    query += name.substr(start, dot - start);
    start = dot + 1;
  }
  query += std::string("\0\x00\x01\x00\x01", 5);
  return query;
}

sockaddr_in inet(const char *address, int port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, address, &in.sin_addr);
  return in;
}

std::vector<std::string> names(const std::vector<Attempt> &attempts) {
  std::vector<std::string> out;
  for (const auto &attempt : attempts) {
    if (const auto *name = std::get_if<NameAttempt>(&attempt)) {
      out.push_back(name->name + (name->source == NameAttempt::Source::proxy
                                      ? "@proxy:" + std::to_string(name->port)
                                      : "@dns"));
    }
  }
  return out;
}

std::vector<std::string> endpoints(const std::vector<Attempt> &attempts) {
  std::vector<std::string> out;
  for (const auto &attempt : attempts) {
    if (const auto *socket = std::get_if<SocketAttempt>(&attempt)) {
      out.push_back(socket->call + " " + socket->to.describe());
    }
  }
  return out;
}

TEST(CallReader, ReadsEndpointsAndTheNamesOfDnsQueries) {
  const auto attempts = attempts_of(kSocketCalls, [] {
    // A connected UDP socket, as glibc's resolver makes one, then its A and AAAA questions
    // with sendmmsg; the loopback always routes.
    const int udp = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in resolver = inet("127.0.0.53", 53);
    ::connect(udp, reinterpret_cast<sockaddr *>(&resolver), sizeof resolver);
    std::string a = dns_query("Api.Example.COM"), aaaa = dns_query("second.example.org");
    iovec vectors[2] = {{a.data(), a.size()}, {aaaa.data(), aaaa.size()}};
    mmsghdr messages[2]{};
    messages[0].msg_hdr.msg_iov = &vectors[0];
    messages[0].msg_hdr.msg_iovlen = 1;
    messages[1].msg_hdr.msg_iov = &vectors[1];
    messages[1].msg_hdr.msg_iovlen = 1;
    ::sendmmsg(udp, messages, 2, MSG_DONTWAIT);
    // An unconnected socket's sendto with the address, and garbage to port 53.
    const int other = ::socket(AF_INET, SOCK_DGRAM, 0);
    std::string third = dns_query("third.example.net");
    ::sendto(other, third.data(), third.size(), MSG_DONTWAIT,
             reinterpret_cast<sockaddr *>(&resolver), sizeof resolver);
    ::sendto(other, "garbage", 7, MSG_DONTWAIT, reinterpret_cast<sockaddr *>(&resolver),
             sizeof resolver);
    // A TCP connect to a documentation address (it fails or not; the call is what counts),
    // and a unix socket by path.
    const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in web = inet("192.0.2.7", 443);
    ::connect(tcp, reinterpret_cast<sockaddr *>(&web), sizeof web);
    const int unix_socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un path{};
    path.sun_family = AF_UNIX;
    std::strcpy(path.sun_path, "/run/learn-test.sock");
    ::connect(unix_socket, reinterpret_cast<sockaddr *>(&path), sizeof path);
    return 0;
  });
  EXPECT_EQ(names(attempts),
            (std::vector<std::string>{"api.example.com@dns", "second.example.org@dns",
                                      "third.example.net@dns"}));
  const auto seen = endpoints(attempts);
  for (const char *expected :
       {"connect 127.0.0.53:53", "sendmmsg 127.0.0.53:53", "sendto 127.0.0.53:53",
        "connect 192.0.2.7:443", "connect /run/learn-test.sock"}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), expected), seen.end()) << expected;
  }
}

TEST(CallReader, ReadsTheHostsAskedOfTheProxyPort) {
  std::uint16_t port = 0;
  // A listener of the test's stands in for the proxy.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in any = inet("127.0.0.1", 0);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr *>(&any), sizeof any), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t length = sizeof any;
  ::getsockname(listener, reinterpret_cast<sockaddr *>(&any), &length);
  port = ntohs(any.sin_port);
  const auto attempts = attempts_of(
      kSocketCalls,
      [&] {
        for (const char *request : {"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n",
                                    "GET http://user@plain.example.com:8080/x HTTP/1.1\r\n\r\n",
                                    "\x16\x03\x01 not a request"}) {
          const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
          sockaddr_in proxy = inet("127.0.0.1", port);
          if (::connect(fd, reinterpret_cast<sockaddr *>(&proxy), sizeof proxy) != 0) return 1;
          ::send(fd, request, std::strlen(request), 0);
          ::close(fd);
        }
        return 0;
      },
      port);
  ::close(listener);
  EXPECT_EQ(names(attempts), (std::vector<std::string>{"api.example.com@proxy:443",
                                                       "plain.example.com@proxy:8080"}));
}

TEST(CallReader, HostileSocketArgumentsAreSkippedNeverFatal) {
  const auto attempts = attempts_of(kSocketCalls, [] {
    const int udp = ::socket(AF_INET, SOCK_DGRAM, 0);
    ::syscall(SYS_connect, udp, nullptr, 16);
    ::syscall(SYS_connect, udp, reinterpret_cast<void *>(0xdead0000000ULL), 16);
    sockaddr_in resolver = inet("127.0.0.53", 53);
    ::syscall(SYS_connect, udp, &resolver, 1u << 30);  // a length past the object
    ::syscall(SYS_connect, udp, &resolver, 1);         // too short for any family
    ::syscall(SYS_sendto, udp, reinterpret_cast<void *>(0xdead0000000ULL), 1ULL << 40, 0, &resolver,
              sizeof resolver);
    ::syscall(SYS_sendmsg, udp, reinterpret_cast<void *>(8), 0);
    msghdr bad{};
    bad.msg_iov = reinterpret_cast<iovec *>(0xdead0000000ULL);
    bad.msg_iovlen = 1ULL << 40;
    bad.msg_name = &resolver;
    bad.msg_namelen = sizeof resolver;
    ::syscall(SYS_sendmsg, udp, &bad, 0);
    ::syscall(SYS_sendmmsg, udp, reinterpret_cast<void *>(0xdead0000000ULL), 1u << 30, 0);
    return 0;
  });
  // The length past the object reads what is there; the message with a bad iovec still
  // names its address; nothing else.
  const auto seen = endpoints(attempts);
  EXPECT_EQ(seen, (std::vector<std::string>{"connect 127.0.0.53:53", "sendto 127.0.0.53:53",
                                            "sendmsg 127.0.0.53:53"}));
  EXPECT_TRUE(names(attempts).empty());
}

}  // namespace
}  // namespace sandbox_host::learn
