// The landlock backend's policy (what it handles and grants, from the network, the ABI and
// the Spec), then the same policy enforced for real: a forked child restricts itself as
// stage 1 does, but without the seccomp filter, so that Landlock alone answers. That is the
// only place where Landlock's own TCP rule shows: in a launch, the filter refuses an
// AF_INET socket before Landlock is asked.
#include "landlock_abi.hpp"
#include "landlock_policy.hpp"
#include "ruleset.hpp"

#include "fixtures.hpp"

#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>
#include <sandbox_host/system_paths.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <thread>

namespace sandbox_host::landlock {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr uint64_t kReadExecute = kFsExecute | kFsReadFile | kFsReadDir;
constexpr uint64_t kDeviceRights = kFsReadFile | kFsWriteFile | kFsIoctlDev;
// Every right that lets a plugin change something.
constexpr uint64_t kChanging = kFsWriteFile | kFsRemoveDir | kFsRemoveFile | kFsMakeChar |
                               kFsMakeDir | kFsMakeReg | kFsMakeSock | kFsMakeFifo | kFsMakeBlock |
                               kFsMakeSym | kFsRefer | kFsTruncate;

std::map<std::string, uint64_t> by_path(const std::vector<Grant> &grants) {
  std::map<std::string, uint64_t> out;
  for (const Grant &grant : grants) {
    EXPECT_EQ(out.count(grant.path), 0u) << grant.path << " granted twice";
    out[grant.path] = grant.access;
  }
  return out;
}

// ---- what is handled ---------------------------------------------------------------------

TEST(LandlockPolicy, NetworkNoneHandlesTcpAndScopesAbstractSocketsAndSignals) {
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    const AbiRights rights = rights_for(abi);
    const SystemPolicy policy = system_policy(Network::none, rights);
    EXPECT_EQ(policy.attr.handled_access_fs, rights.fs) << "ABI " << abi;
    // No rule grants a port, so handling TCP is refusing it.
    EXPECT_EQ(policy.attr.handled_access_net, abi >= 4 ? kNetBindTcp | kNetConnectTcp : 0u)
        << "ABI " << abi;
    EXPECT_EQ(policy.attr.scoped, abi >= 6 ? kScopeAbstractUnixSocket | kScopeSignal : 0u)
        << "ABI " << abi;
  }
}

TEST(LandlockPolicy, NetworkOutboundHandlesNoTcpAndScopesOnlySignals) {
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    const AbiRights rights = rights_for(abi);
    const SystemPolicy policy = system_policy(Network::outbound, rights);
    EXPECT_EQ(policy.attr.handled_access_fs, rights.fs) << "ABI " << abi;
    EXPECT_EQ(policy.attr.handled_access_net, 0u) << "ABI " << abi;
    EXPECT_EQ(policy.attr.scoped, abi >= 6 ? kScopeSignal : 0u) << "ABI " << abi;
  }
}

TEST(LandlockPolicy, DenialsAfterThePluginsExecAreLoggedFromAbi7) {
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    for (Network network : {Network::none, Network::outbound}) {
      EXPECT_EQ(system_policy(network, rights_for(abi)).restrict_flags,
                abi >= 7 ? kLogNewExecOn : 0u)
          << "ABI " << abi;
    }
  }
}

// ---- what is granted ---------------------------------------------------------------------

TEST(LandlockPolicy, TheSystemIsReadAndExecuteOnlyAndTheDevicesReadWrite) {
  const AbiRights rights = rights_for(kNewestKnownAbi);
  const auto grants = by_path(system_policy(Network::none, rights).grants);
  size_t expected = 0;
  for (const char *dir : kSystemDirs) {
    ++expected;
    EXPECT_EQ(grants.count(dir), 1u) << dir;
    if (grants.count(dir) != 0) {
      EXPECT_EQ(grants.at(dir), kReadExecute) << dir;
    }
  }
  for (const char *entry : kEtcEntries) {
    ++expected;
    EXPECT_EQ(grants.count(entry), 1u) << entry;
    if (grants.count(entry) != 0) {
      EXPECT_EQ(grants.at(entry), kFsReadFile | kFsReadDir) << entry;
    }
  }
  for (const char *device : kDevices) {
    ++expected;
    const std::string path = std::string("/dev/") + device;
    EXPECT_EQ(grants.count(path), 1u) << path;
    if (grants.count(path) != 0) {
      EXPECT_EQ(grants.at(path), kDeviceRights) << path;
    }
  }
  // The calling process's own /proc directory, read-only: the plugin's /proc/self.
  const std::string own_proc = "/proc/" + std::to_string(::getpid());
  ++expected;
  EXPECT_EQ(grants.count(own_proc), 1u) << own_proc;
  if (grants.count(own_proc) != 0) {
    EXPECT_EQ(grants.at(own_proc), kFsReadFile | kFsReadDir);
  }
  EXPECT_EQ(grants.size(), expected);
  for (const auto &[path, access] : grants) {
    if (!path.starts_with("/dev/")) {
      EXPECT_EQ(access & kChanging, 0u) << path;
    }
  }
  // What must never be granted whole.
  for (const char *secret : {"/", "/etc", "/etc/shadow", "/root", "/home", "/proc", "/tmp", "/var",
                             "/run", "/dev", "/sys"}) {
    EXPECT_EQ(grants.count(secret), 0u) << secret;
  }
}

TEST(LandlockPolicy, TheSpecGrantsReadPathsReadAndItsDirectoriesEverything) {
  Spec spec;
  spec.binary_path = "/opt/plugin/bin/plugin";
  spec.socket_dir = "/run/plugin/sock";
  spec.tmp_dir = "/var/tmp/plugin";
  spec.read_paths = {"/srv/data", "/srv/models/a.bin"};
  for (int abi = 1; abi <= kNewestKnownAbi; ++abi) {
    const AbiRights rights = rights_for(abi);
    const auto grants = by_path(spec_grants(spec, rights));
    EXPECT_EQ(grants.size(), 5u);
    EXPECT_EQ(grants.at("/srv/data"), kReadExecute);
    EXPECT_EQ(grants.at("/srv/models/a.bin"), kReadExecute);
    EXPECT_EQ(grants.at("/opt/plugin/bin/plugin"), kReadExecute);
    EXPECT_EQ(grants.at("/run/plugin/sock"), rights.fs) << "ABI " << abi;
    EXPECT_EQ(grants.at("/var/tmp/plugin"), rights.fs) << "ABI " << abi;
  }
}

// ---- the Ruleset -------------------------------------------------------------------------

TEST(LandlockRuleset, AMissingPathIsAnErrorUnlessItMayBeMissing) {
  if (kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  const AbiRights rights = rights_for(kernel_abi());
  Ruleset ruleset(system_policy(Network::none, rights).attr);
  EXPECT_THROW(ruleset.allow("/nonexistent/sandbox-host-test", kReadExecute), backends::SetupError);
  EXPECT_NO_THROW(ruleset.allow_if_present("/nonexistent/sandbox-host-test", kReadExecute));
}

// A file takes only the rights of files; directory rights on it would be EINVAL.
TEST(LandlockRuleset, AFileGrantKeepsOnlyTheRightsOfFiles) {
  if (kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  const AbiRights rights = rights_for(kernel_abi());
  Ruleset ruleset(system_policy(Network::none, rights).attr);
  test::TempFile file("x\n");
  EXPECT_NO_THROW(ruleset.allow(file.path().string(), rights.fs));
  EXPECT_NO_THROW(ruleset.allow(file.path().string(), kReadExecute));
}

// ---- the policy enforced -----------------------------------------------------------------

// A Spec over real directories: SocketDir and TmpDir, a ReadPath with a file in it, and a
// file beside them that nothing grants.
class Workspace {
 public:
  Workspace() : root_("outside\n", "outside.txt") {
    for (const char *dir : {"sock", "tmp", "read"}) fs::create_directory(root_.dir() / dir);
    std::ofstream(root_.dir() / "read/data.txt") << "data\n";
    spec.binary_path = fs::canonical("/bin/true").string();
    spec.socket_dir = (root_.dir() / "sock").string();
    spec.tmp_dir = (root_.dir() / "tmp").string();
    spec.read_paths = {(root_.dir() / "read").string()};
  }
  fs::path path(const std::string &name) const { return root_.dir() / name; }
  Spec spec;

 private:
  test::TempFile root_;
};

// What an action in the restricted child returns: 0 on success, else the errno it failed with.
using Action = std::function<int()>;

// How the child restricts itself beyond the ruleset of this kernel's ABI.
struct Restriction {
  int abi = kernel_abi();       // the row of the table to use (a lower one: an older kernel)
  bool seccomp_filter = false;  // also the filter stage 1 loads for the network
};

// Forks a child that builds the backend's ruleset for network and spec, sets no_new_privs,
// restricts itself and runs action; returns what the action returned. 254: the set-up threw.
int restricted(Network network, const Spec &spec, const Action &action,
               const Restriction &restriction = {}) {
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int code = 254;
    try {
      const AbiRights rights = rights_for(restriction.abi);
      const SystemPolicy policy = system_policy(network, rights);
      Ruleset ruleset(policy.attr);
      for (const Grant &grant : policy.grants) ruleset.allow_if_present(grant.path, grant.access);
      for (const Grant &grant : spec_grants(spec, rights)) ruleset.allow(grant.path, grant.access);
      if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
        if (restriction.seccomp_filter) {
          backends::install_seccomp_filter(network == Network::none
                                               ? backends::Namespaces::none_network_none
                                               : backends::Namespaces::none_network_outbound);
        }
        ruleset.restrict_self(policy.restrict_flags);
        code = action();
      }
    } catch (...) {
    }
    ::_exit(code);
  }
  // Bounded: a child that hangs is killed, and reported as -1.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int result_of(int rc) {
  return rc == 0 ? 0 : errno;
}

Action open_file(const fs::path &path, int flags) {
  return [path, flags] {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd < 0) return errno;
    ::close(fd);
    return 0;
  };
}

class LandlockEnforced : public ::testing::Test {
 protected:
  void SetUp() override {
    if (kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
  }
  Workspace workspace_;
};

TEST_F(LandlockEnforced, FilesOutsideTheGrantsAreRefused) {
  const Spec &spec = workspace_.spec;
  for (Network network : {Network::none, Network::outbound}) {
    // Granted.
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("sock/new"), O_WRONLY | O_CREAT)),
              0);
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("tmp/new"), O_WRONLY | O_CREAT)),
              0);
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("read/data.txt"), O_RDONLY)), 0);
    EXPECT_EQ(restricted(network, spec, open_file("/etc/passwd", O_RDONLY)), 0);
    // A shell's "> /dev/null" opens with O_TRUNC.
    EXPECT_EQ(restricted(network, spec, open_file("/dev/null", O_WRONLY | O_TRUNC)), 0);
    // Refused.
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("outside.txt"), O_RDONLY)),
              EACCES);
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("beside"), O_WRONLY | O_CREAT)),
              EACCES);
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("read/data.txt"), O_WRONLY)),
              EACCES);
    EXPECT_EQ(restricted(network, spec, open_file(workspace_.path("read/new"), O_WRONLY | O_CREAT)),
              EACCES);
    EXPECT_EQ(restricted(network, spec, open_file("/etc/shadow", O_RDONLY)), EACCES);
    EXPECT_EQ(restricted(network, spec, open_file("/usr/bin/true", O_WRONLY)), EACCES);
    EXPECT_EQ(restricted(network, spec, open_file("/", O_RDONLY | O_DIRECTORY)), EACCES);
  }
  EXPECT_TRUE(fs::exists(workspace_.path("sock/new")));
  EXPECT_FALSE(fs::exists(workspace_.path("beside")));
}

TEST_F(LandlockEnforced, TruncateOutsideTheGrantsIsRefusedFromAbi3) {
  if (kernel_abi() < 3) GTEST_SKIP() << "truncate(2) is restricted from ABI 3";
  const Spec &spec = workspace_.spec;
  const fs::path outside = workspace_.path("outside.txt");
  EXPECT_EQ(
      restricted(Network::none, spec, [&] { return result_of(::truncate(outside.c_str(), 0)); }),
      EACCES);
  EXPECT_EQ(fs::file_size(outside), 8u);
  const fs::path inside = workspace_.path("tmp/inside.txt");
  std::ofstream(inside) << "inside\n";
  EXPECT_EQ(
      restricted(Network::none, spec, [&] { return result_of(::truncate(inside.c_str(), 0)); }), 0);
  EXPECT_EQ(fs::file_size(inside), 0u);
}

// A TCP listener on the host's loopback, port chosen by the kernel.
class TcpListener {
 public:
  TcpListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    address_.sin_family = AF_INET;
    address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address_;
    if (::bind(fd_, reinterpret_cast<sockaddr *>(&address_), size) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&address_), &size) != 0) {
      throw std::runtime_error(std::string("tcp listener: ") + std::strerror(errno));
    }
  }
  ~TcpListener() { ::close(fd_); }
  const sockaddr_in &address() const { return address_; }

 private:
  int fd_;
  sockaddr_in address_{};
};

int connect_tcp(const sockaddr_in &address) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

int bind_tcp() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::bind(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

TEST_F(LandlockEnforced, NetworkNoneRefusesTcpEvenWithoutTheSeccompFilter) {
  if (kernel_abi() < 4) GTEST_SKIP() << "TCP is restricted from ABI 4";
  TcpListener listener;
  const sockaddr_in address = listener.address();
  EXPECT_EQ(restricted(Network::none, workspace_.spec, [&] { return connect_tcp(address); }),
            EACCES);
  EXPECT_EQ(restricted(Network::none, workspace_.spec, bind_tcp), EACCES);
  EXPECT_EQ(restricted(Network::outbound, workspace_.spec, [&] { return connect_tcp(address); }),
            0);
  EXPECT_EQ(restricted(Network::outbound, workspace_.spec, bind_tcp), 0);
}

// Below ABI 4 Landlock cannot restrict TCP, but network none's seccomp filter refuses every
// socket family but AF_UNIX, TCP's included, at every ABI. What ABI 4 adds is that a TCP
// socket the plugin did not create (inherited, or passed in over a unix socket) cannot
// connect either, which is what coverage_warning(3) names.
TEST_F(LandlockEnforced, BelowAbi4TheFilterStillRefusesTcpSocketsButNotOnesPassedIn) {
  if (kernel_abi() < 4) GTEST_SKIP() << "compares with ABI 4's TCP rule";
  TcpListener listener;
  const sockaddr_in address = listener.address();
  const Restriction abi3{3, true}, this_kernel{kernel_abi(), true};
  EXPECT_EQ(restricted(
                Network::none, workspace_.spec, [&] { return connect_tcp(address); }, abi3),
            EAFNOSUPPORT);
  EXPECT_EQ(restricted(Network::none, workspace_.spec, bind_tcp, abi3), EAFNOSUPPORT);

  // Made before the fork, so the restricted child holds a socket it did not create.
  for (const auto &[restriction, expected] : {std::pair{abi3, 0}, std::pair{this_kernel, EACCES}}) {
    const int passed_in = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(passed_in, 0);
    EXPECT_EQ(restricted(
                  Network::none, workspace_.spec,
                  [&] {
                    return result_of(::connect(
                        passed_in, reinterpret_cast<const sockaddr *>(&address), sizeof address));
                  },
                  restriction),
              expected)
        << "ABI " << restriction.abi;
    ::close(passed_in);
  }
}

std::string random_name() {
  std::random_device device;
  return "sandbox-host-landlock-" + std::to_string(device()) + std::to_string(device());
}

int connect_abstract(const std::string &name) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr *>(&address), length);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

TEST_F(LandlockEnforced, AbstractSocketsOfTheHostAreScopedOnlyWithNetworkNone) {
  if (kernel_abi() < 6) GTEST_SKIP() << "abstract unix sockets are scoped from ABI 6";
  const std::string name = random_name();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr *>(&address), length), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  EXPECT_EQ(restricted(Network::none, workspace_.spec, [&] { return connect_abstract(name); }),
            EPERM);
  // With outbound, the host's network is granted, its abstract sockets with it.
  EXPECT_EQ(restricted(Network::outbound, workspace_.spec, [&] { return connect_abstract(name); }),
            0);
  ::close(listener);
}

TEST_F(LandlockEnforced, SignalsToProcessesOutsideTheDomainAreRefused) {
  if (kernel_abi() < 6) GTEST_SKIP() << "signals are scoped from ABI 6";
  const pid_t host_process = ::fork();
  ASSERT_GE(host_process, 0);
  if (host_process == 0) {
    ::pause();
    ::_exit(0);
  }
  for (Network network : {Network::none, Network::outbound}) {
    EXPECT_EQ(restricted(network, workspace_.spec,
                         [&] { return result_of(::kill(host_process, SIGTERM)); }),
              EPERM);
  }
  // Still there: the refused SIGTERM never arrived.
  EXPECT_EQ(::waitpid(host_process, nullptr, WNOHANG), 0);
  ::kill(host_process, SIGKILL);
  ::waitpid(host_process, nullptr, 0);
  // Within the domain, signals still work (the plugin's own children).
  EXPECT_EQ(restricted(Network::none, workspace_.spec,
                       [] {
                         const pid_t child = ::fork();
                         if (child == 0) {
                           ::pause();
                           ::_exit(0);
                         }
                         const int error = result_of(::kill(child, SIGKILL));
                         ::waitpid(child, nullptr, 0);
                         return error;
                       }),
            0);
}

}  // namespace
}  // namespace sandbox_host::landlock
