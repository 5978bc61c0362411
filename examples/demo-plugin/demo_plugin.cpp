// A plugin for the README's main job, go-plugin style: it listens on a unix socket in its
// socket directory, prints the handshake line on stdout, then tells on stderr what it can
// see of the host, so a reader compares backends at a glance.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

extern char **environ;

namespace {

const char *verdict(const char *path) {
  return ::access(path, R_OK) == 0 ? "readable" : "denied";
}

}  // namespace

int main() {
  // TmpDir is SocketDir/tmp by convention (docs/design.md#the-spec), so the socket goes next
  // to it.
  const char *tmpdir = std::getenv("TMPDIR");
  if (tmpdir == nullptr) {
    std::fprintf(stderr, "demo-plugin: TMPDIR is not set\n");
    return 1;
  }
  const std::string socket_path =
      (std::filesystem::path(tmpdir).parent_path() / "demo-plugin.sock").string();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
      ::listen(fd, 1) != 0) {
    std::fprintf(stderr, "demo-plugin: listen on %s: %s\n", socket_path.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::printf("1|1|unix|%s|grpc\n", socket_path.c_str());
  std::fflush(stdout);

  int variables = 0;
  for (char **e = environ; *e != nullptr; ++e) ++variables;
  int descriptors = 0;
  for ([[maybe_unused]] const auto &entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++descriptors;
  }
  std::fprintf(stderr,
               "demo-plugin: uid %u, session leader %s, %d environment variables, %d open "
               "descriptors (one is this listing, one the socket)\n"
               "demo-plugin: /etc/shadow %s, /root %s, /etc/hostname %s\n",
               ::getuid(), ::getsid(0) == ::getpid() ? "yes" : "no", variables, descriptors,
               verdict("/etc/shadow"), verdict("/root"), verdict("/etc/hostname"));
  ::close(fd);
  ::unlink(socket_path.c_str());
  return 0;
}
