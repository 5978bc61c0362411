// The go-plugin handshake through the namespaces backend: the plugin listens inside the
// sandbox in SocketDir, prints the socket's path, and the host connects to that very path.
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

namespace sandbox_host {
namespace {

// Sends one line on a fresh connection to the unix socket at path; returns the answer line.
std::string ask(const std::string &path, const std::string &line) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
    std::string error = std::string("connect: ") + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return error;
  }
  std::string request = line + "\n";
  std::string answer;
  if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    char c;
    while (::read(fd, &c, 1) == 1 && c != '\n') answer.push_back(c);
  }
  ::close(fd);
  return answer;
}

class Handshake : public ::testing::TestWithParam<bool> {};

TEST_P(Handshake, TheHostReachesThePluginAtTheSocketPathItPrinted) {
  const bool unprivileged = GetParam();
  test::UnprivilegedInstall install;
  const std::string plugin = install.add_binary(HANDSHAKE_PLUGIN);
  test::TempFile dirs("", "unused");
  const std::filesystem::path socket_dir = dirs.dir() / "sock";
  std::filesystem::create_directory(socket_dir);
  if (unprivileged) {
    ASSERT_EQ(::chown(socket_dir.c_str(), test::kNobody, test::kNobody), 0);
  }

  std::vector<std::string> argv;
  if (unprivileged) argv = test::as_nobody();
  for (const std::string &arg :
       {install.sandbox_host(), std::string("run"), std::string("--socket-dir"),
        socket_dir.string(), std::string("--"), plugin, socket_dir.string()}) {
    argv.push_back(arg);
  }
  test::RunningProcess run(
      argv, test::with_env({"PATH=/usr/bin:/bin", "CLAWPATROL_SANDBOX_BACKEND=namespaces"}));
  auto handshake = run.read_line(std::chrono::seconds(10));
  const std::string socket = (socket_dir / "plugin.sock").string();
  ASSERT_EQ(handshake.value_or("<nothing>"), "1|1|unix|" + socket + "|grpc");

  EXPECT_EQ(ask(socket, "hello"), "echo hello from sandbox");
  EXPECT_EQ(ask(socket, "again"), "echo again from sandbox");
  ask(socket, "quit");
  test::ProcessResult result = run.wait(std::chrono::seconds(10));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
}

INSTANTIATE_TEST_SUITE_P(AsRootAndUnprivileged, Handshake, ::testing::Values(false, true),
                         [](const auto &info) { return info.param ? "nobody" : "root"; });

}  // namespace
}  // namespace sandbox_host
