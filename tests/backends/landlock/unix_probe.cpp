// A command for landlock_view_tests that tries what a shell cannot: a unix socket by path
// and a socket pair. Prints one line, "connect ok" or "connect <errno name>", or
// "socketpair ok" (after a byte went through it) or "socketpair <errno name>"; exits 0.
//
//   unix_probe connect PATH
//   unix_probe socketpair
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int report(const char *what, int error) {
  std::printf("%s %s\n", what, error == 0 ? "ok" : strerrorname_np(error));
  return 0;
}

int try_connect(const std::string &path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return report("connect", ENAMETOOLONG);
  std::memcpy(address.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return report("connect", errno);
  const int error =
      ::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0 ? 0 : errno;
  ::close(fd);
  return report("connect", error);
}

int try_socketpair() {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    return report("socketpair", errno);
  }
  char byte = 'x';
  int error = ::write(ends[0], &byte, 1) == 1 && ::read(ends[1], &byte, 1) == 1 ? 0 : errno;
  ::close(ends[0]);
  ::close(ends[1]);
  return report("socketpair", error);
}

}  // namespace

int main(int argc, char **argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "connect" && argc == 3) return try_connect(argv[2]);
  if (command == "socketpair" && argc == 2) return try_socketpair();
  std::fprintf(stderr, "usage: unix_probe connect PATH | unix_probe socketpair\n");
  return 2;
}
