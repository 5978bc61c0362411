// The landlock backend's escape corpus on the network and IPC: network none and outbound, the
// host's abstract sockets, a unix socket in SocketDir, the launching user's System V IPC.
//
// Every test launches the real `sandbox-host run`, forced to the landlock backend, from a
// hostile environment, as root and as nobody, each both ways a sandbox is made, and has
// escape_plugin attempt one thing: what a plugin must not do is DENIED, what it may do is
// ALLOWED.
#include "landlock_escape.hpp"

namespace sandbox_host {
namespace {

using namespace landlock_escape;

// ---- network ---------------------------------------------------------------------------

// Without a network namespace, network "none" is the seccomp filter refusing every socket
// family but AF_UNIX (Landlock's TCP rule stands behind it: policy_test.cpp).
TEST_P(LandlockEscape, NetworkNoneRefusesEveryInternetSocket) {
  std::unique_ptr<Listener> tcp, udp;
  const int tcp_port = listen_inet(tcp);
  const int udp_port = listen_inet(udp, true);
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(udp_port, 0);

  EXPECT_TRUE(
      DeniedWith(attempt({"connect-tcp", "127.0.0.1", std::to_string(tcp_port)}), "EAFNOSUPPORT"));
  EXPECT_TRUE(DeniedWith(attempt({"bind-tcp"}), "EAFNOSUPPORT"));
  EXPECT_TRUE(
      DeniedWith(attempt({"send-udp", "127.0.0.1", std::to_string(udp_port)}), "EAFNOSUPPORT"));
  EXPECT_FALSE(anything_arrived(*tcp));
  EXPECT_FALSE(anything_arrived(*udp));
  expect_seccomp_records({"seccomp: socket (not AF_UNIX)", "seccomp: socket (not AF_UNIX)",
                          "seccomp: socket (not AF_UNIX)"});
}

TEST_P(LandlockEscape, NetworkNoneReachesNoAbstractSocketOfTheHost) {
  if (abi() < 6) GTEST_SKIP() << "abstract unix sockets are scoped from ABI 6; the warning says so";
  std::unique_ptr<Listener> abstract;
  const std::string abstract_name = "sandbox-host-escape-" + random_suffix();
  ASSERT_TRUE(listen_unix(abstract, abstract_name, true));
  EXPECT_TRUE(DeniedWith(attempt({"connect-abstract", abstract_name}), "EPERM"));
  EXPECT_FALSE(anything_arrived(*abstract));
}

TEST_P(LandlockEscape, NetworkOutboundReachesTheHostsLoopback) {
  std::unique_ptr<Listener> tcp, udp;
  const int tcp_port = listen_inet(tcp);
  const int udp_port = listen_inet(udp, true);
  ASSERT_GT(tcp_port, 0);
  ASSERT_GT(udp_port, 0);
  Launch launch;
  launch.network = "outbound";
  EXPECT_TRUE(Allowed(attempt({"connect-tcp", "127.0.0.1", std::to_string(tcp_port)}, launch)));
  EXPECT_TRUE(anything_arrived(*tcp));
  EXPECT_TRUE(Allowed(attempt({"send-udp", "127.0.0.1", std::to_string(udp_port)}, launch)));
  EXPECT_TRUE(anything_arrived(*udp));
  EXPECT_TRUE(Allowed(attempt({"bind-tcp"}, launch)));
}

// What SocketDir is for: the plugin serves on a unix socket there, and the host connects.
TEST_P(LandlockEscape, AUnixSocketInSocketDirServesTheHost) {
  const fs::path socket = socket_dir() / "plugin.sock";
  test::RunningProcess launcher(argv(plugin(), {"listen-unix", socket.string()}),
                                test::with_env(host_env()));
  auto listening = launcher.read_line(10s);
  ASSERT_EQ(listening.value_or("<nothing>"), "ALLOWED listening " + socket.string())
      << launcher.wait(5s).err;

  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0)
      << std::strerror(errno);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char buffer[64] = {};
  const ssize_t n = ::recv(fd, buffer, sizeof buffer - 1, MSG_WAITALL);
  ::close(fd);
  EXPECT_EQ(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0), "hello from the plugin\n");
  ProcessResult result = launcher.wait(10s);
  EXPECT_EQ(result.code, 0) << result.err;
}

TEST_P(LandlockEscape, SystemVIpcOfTheLaunchingUserIsRefused) {
  // No ipc namespace: the seccomp filter stands in for one.
  // A queue of the launching user's on the host, under a key the plugin is told.
  std::random_device device;
  const key_t key = static_cast<key_t>(device() & 0x3fffffff) | 0x40000000;
  const int queue = ::msgget(key, IPC_CREAT | IPC_EXCL | 0600);
  ASSERT_GE(queue, 0) << std::strerror(errno);
  msqid_ds settings{};
  ASSERT_EQ(::msgctl(queue, IPC_STAT, &settings), 0);
  settings.msg_perm.uid = uid();
  settings.msg_perm.gid = uid();
  ASSERT_EQ(::msgctl(queue, IPC_SET, &settings), 0);

  Attempt a = attempt({"sysv-msg", std::to_string(key)});
  struct {
    long type;
    char text[32];
  } received{};
  const ssize_t n = ::msgrcv(queue, &received, sizeof received.text, 0, IPC_NOWAIT);
  ::msgctl(queue, IPC_RMID, nullptr);
  EXPECT_TRUE(DeniedWith(a, "EPERM"));
  EXPECT_LT(n, 0) << "the plugin's message arrived: " << received.text;
  expect_seccomp_records({"seccomp: msgget"});
}

}  // namespace
}  // namespace sandbox_host
