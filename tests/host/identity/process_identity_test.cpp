// Who asked (process_identity.hpp), against real processes: the holders of a file, a small
// process tree, uids, working directories and environments, mount namespaces, POSIX and
// open-file-description locks, and pidfds across an exit.
#include <sandbox_host/host/identity/process_identity.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>

#include <fixtures.hpp>
#include <process.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::broker {
namespace {

using test::gone_within;

namespace fs = std::filesystem;

using namespace std::chrono_literals;

std::pair<UniqueFd, UniqueFd> cloexec_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Reads exactly size bytes from fd within timeout; false on EOF, error or timeout.
bool read_within(int fd, void *data, std::size_t size, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto *bytes = static_cast<char *>(data);
  for (std::size_t got = 0; got < size;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(fd, bytes + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

// A forked copy of the test: runs setup (whose result, an int, it reports), then waits for
// release() and exits 0. Killed and reaped on destruction.
class Child {
 public:
  explicit Child(const std::function<int()> &setup) {
    auto [ready_read, ready_write] = cloexec_pipe();
    auto [release_read, release_write] = cloexec_pipe();
    pid_ = ::fork();
    if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
      ready_read.reset();
      release_write.reset();
      const int result = setup();
      if (::write(ready_write.get(), &result, sizeof result) != sizeof result) ::_exit(3);
      char byte = 0;
      while (::read(release_read.get(), &byte, 1) < 0 && errno == EINTR) {
      }
      ::_exit(0);
    }
    ready_ = std::move(ready_read);
    release_ = std::move(release_write);
  }
  ~Child() { kill(); }
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;

  pid_t pid() const noexcept { return pid_; }

  // What setup returned, once it did (bounded); nullopt if it never reported.
  std::optional<int> result() {
    if (!result_ && ready_) {
      int value = 0;
      if (read_within(ready_.get(), &value, sizeof value, 10s)) result_ = value;
      ready_.reset();
    }
    return result_;
  }

  // Lets the child exit 0 (it may stay a zombie until reaped).
  void release() {
    const char byte = 'x';
    if (release_) (void)!::write(release_.get(), &byte, 1);
    release_.reset();
  }

  // Reaps the child, waiting at most timeout; its wait status, or nullopt.
  std::optional<int> reap(std::chrono::milliseconds timeout = 10s) {
    if (reaped_) return status_;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int status = 0;
      const pid_t done = ::waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        status_ = status;
        return status;
      }
      if (done < 0 || std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(10ms);
    }
  }

  void kill() {
    if (reaped_ || pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
    status_ = status;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd ready_, release_;
  std::optional<int> result_;
  bool reaped_ = false;
  int status_ = 0;
};

// A forked child that runs prepare (returning 0, or an errno on failure) and then execs
// argv with env; ready() is true once the exec happened. Killed and reaped on destruction.
class ExecChild {
 public:
  ExecChild(
      std::vector<std::string> argv, std::vector<std::string> env,
      const std::function<int()> &prepare = [] { return 0; }) {
    std::vector<char *> args, envp;
    for (auto &a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    auto [status_read, status_write] = cloexec_pipe();
    pid_ = ::fork();
    if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
      status_read.reset();
      int error = prepare();
      if (error == 0) {
        ::execve(args[0], args.data(), envp.data());
        error = errno;
      }
      (void)!::write(status_write.get(), &error, sizeof error);
      ::_exit(127);
    }
    status_write.reset();
    // EOF: the close-on-exec write end went with the exec. A number: why it did not.
    int error = 0;
    pollfd ready{status_read.get(), POLLIN, 0};
    if (::poll(&ready, 1, 10000) == 1) {
      const ssize_t n = ::read(status_read.get(), &error, sizeof error);
      exec_error_ = n == 0 ? 0 : n == sizeof error ? error : EIO;
    } else {
      exec_error_ = ETIMEDOUT;
    }
  }
  ~ExecChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ExecChild(const ExecChild &) = delete;
  ExecChild &operator=(const ExecChild &) = delete;

  pid_t pid() const noexcept { return pid_; }
  // 0 once argv runs; otherwise the errno of what failed.
  int exec_error() const noexcept { return exec_error_; }

 private:
  pid_t pid_ = -1;
  int exec_error_ = 0;
};

constexpr uid_t kNobody = 65534;
const fs::path kProc = "/proc";

std::vector<pid_t> sorted(std::vector<pid_t> pids) {
  std::sort(pids.begin(), pids.end());
  return pids;
}

// A file of its own, opened (close-on-exec: forks inherit it, execs do not).
struct HeldFile {
  HeldFile() : file("held"), fd(::open(file.path().c_str(), O_RDWR | O_CLOEXEC)) {
    if (!fd || ::fstat(fd.get(), &status) != 0) {
      throw std::system_error(errno, std::generic_category(), "open " + file.path().string());
    }
  }
  test::TempFile file;
  UniqueFd fd;
  struct stat status {};
};

int become_nobody(bool dumpable) {
  if (::setresgid(kNobody, kNobody, kNobody) != 0 || ::setresuid(kNobody, kNobody, kNobody) != 0) {
    return -errno;
  }
  // Changing uids makes a process non-dumpable: its /proc/<pid>/fd turns root's, while
  // /proc/<pid> itself keeps showing its effective uid.
  if (dumpable && ::prctl(PR_SET_DUMPABLE, 1) != 0) return -errno;
  return 0;
}

// ---- holders / holds ------------------------------------------------------------------------

TEST(Holders, FindsExactlyThisProcessAndTheChildThatKeptTheFile) {
  HeldFile held;
  Child keeper([] { return 0; });
  const int fd = held.fd.get();
  Child closer([fd] { return ::close(fd); });
  ASSERT_EQ(keeper.result(), 0);
  ASSERT_EQ(closer.result(), 0);
  const auto found = holders(kProc, held.status.st_dev, held.status.st_ino, ::geteuid());
  EXPECT_EQ(sorted(found), sorted({::getpid(), keeper.pid()}));
}

TEST(Holders, ListsEachProcessOnceWhateverItsThreadsAndDescriptors) {
  HeldFile held;
  const UniqueFd second(::open(held.file.path().c_str(), O_RDONLY | O_CLOEXEC));
  const UniqueFd duplicate(::fcntl(held.fd.get(), F_DUPFD_CLOEXEC, 0));
  ASSERT_TRUE(second && duplicate);
  std::thread thread;
  int stop[2];
  ASSERT_EQ(::pipe2(stop, O_CLOEXEC), 0);
  thread = std::thread([&] {
    char byte;
    (void)!::read(stop[0], &byte, 1);
  });
  const auto found = holders(kProc, held.status.st_dev, held.status.st_ino, ::geteuid());
  (void)!::write(stop[1], "x", 1);
  thread.join();
  ::close(stop[0]);
  ::close(stop[1]);
  EXPECT_EQ(found, std::vector<pid_t>{::getpid()});
}

TEST(Holders, LeavesOutTheExceptedProcess) {
  HeldFile held;
  Child keeper([] { return 0; });
  ASSERT_EQ(keeper.result(), 0);
  const auto &st = held.status;
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, ::geteuid(), ::getpid()),
            std::vector<pid_t>{keeper.pid()});
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, ::geteuid(), keeper.pid()),
            std::vector<pid_t>{::getpid()});
}

TEST(Holders, FindsNobodyForAnotherUidOrAnotherFile) {
  HeldFile held, other;
  const auto &st = held.status;
  EXPECT_TRUE(holders(kProc, st.st_dev, st.st_ino, ::geteuid() + 4242).empty());
  test::TempFile unopened("nobody opened this");
  struct stat status {};
  ASSERT_EQ(::stat(unopened.path().c_str(), &status), 0);
  EXPECT_TRUE(holders(kProc, status.st_dev, status.st_ino, ::geteuid()).empty());
  EXPECT_TRUE(holders("/nonexistent-proc", st.st_dev, st.st_ino, ::geteuid()).empty());
}

// A holder that became another user (and, as any process that changes uids, non-dumpable)
// is that user's, not root's, though root can read its descriptors still.
TEST(Holders, DoesNotListAHolderThatBecameAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change uids";
  HeldFile held;
  Child nobody([] { return become_nobody(false); });
  ASSERT_EQ(nobody.result(), 0);
  const auto &st = held.status;
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, 0), std::vector<pid_t>{::getpid()})
      << "pid " << nobody.pid() << " runs as uid " << kNobody;
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, kNobody), std::vector<pid_t>{nobody.pid()});
}

TEST(Holders, DoesNotListADumpableHolderOfAnotherUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change uids";
  HeldFile held;
  Child nobody([] { return become_nobody(true); });
  ASSERT_EQ(nobody.result(), 0);
  const auto &st = held.status;
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, 0), std::vector<pid_t>{::getpid()});
  EXPECT_EQ(holders(kProc, st.st_dev, st.st_ino, kNobody), std::vector<pid_t>{nobody.pid()});
}

TEST(Holds, TellsWhetherOneProcessHoldsTheFile) {
  HeldFile held;
  Child keeper([] { return 0; });
  const int fd = held.fd.get();
  Child closer([fd] { return ::close(fd); });
  ASSERT_EQ(keeper.result(), 0);
  ASSERT_EQ(closer.result(), 0);
  const auto &st = held.status;
  EXPECT_TRUE(holds(kProc, ::getpid(), st.st_dev, st.st_ino));
  EXPECT_TRUE(holds(kProc, keeper.pid(), st.st_dev, st.st_ino));
  EXPECT_FALSE(holds(kProc, closer.pid(), st.st_dev, st.st_ino));
  keeper.kill();
  EXPECT_FALSE(holds(kProc, keeper.pid(), st.st_dev, st.st_ino));
}

// ---- the peer of a unix socket ----------------------------------------------------------------

// The check behind the socket transport's pidfd on kernels without SO_PEERPIDFD: the process
// a pid names now is the peer only if it holds the other end of the very connection.
TEST(UnixPeerInode, NamesTheOtherEndSoOnlyItsHolderPassesAsThePeer) {
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends), 0);
  UniqueFd ours(ends[0]), theirs(ends[1]);
  struct stat mine {
  }, other{};
  ASSERT_EQ(::fstat(ours.get(), &mine), 0);
  ASSERT_EQ(::fstat(theirs.get(), &other), 0);
  EXPECT_EQ(unix_peer_inode(ours.get()), other.st_ino);
  EXPECT_EQ(unix_peer_inode(theirs.get()), mine.st_ino);
  // A child that keeps the other end holds it; one that closed it does not.
  Child keeper([] { return 0; });
  const int far = theirs.get();
  Child closer([far] { return ::close(far); });
  ASSERT_EQ(keeper.result(), 0);
  ASSERT_EQ(closer.result(), 0);
  EXPECT_TRUE(holds(kProc, keeper.pid(), mine.st_dev, *unix_peer_inode(ours.get())));
  EXPECT_FALSE(holds(kProc, closer.pid(), mine.st_dev, *unix_peer_inode(ours.get())));
  // Not a unix socket: no peer to name.
  HeldFile held;
  EXPECT_EQ(unix_peer_inode(held.fd.get()), std::nullopt);
}

// The whole way before Linux 6.5 (SO_PEERPIDFD), run on any kernel: a pid is taken for the
// peer only while its process holds the other end, and a peer that exited names no one.
TEST(PeerPidfdByHolder, PinsThePeerThatHoldsTheOtherEndAndNoOtherProcess) {
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  UniqueFd ours(ends[0]), theirs(ends[1]);
  Child peer([] { return 0; });
  const int far = theirs.get();
  Child other([far] { return ::close(far); });
  ASSERT_EQ(peer.result(), 0);
  ASSERT_EQ(other.result(), 0);
  theirs.reset();

  const UniqueFd pinned = peer_pidfd_by_holder(ours.get(), peer.pid(), kProc);
  ASSERT_TRUE(pinned);
  std::ifstream info("/proc/self/fdinfo/" + std::to_string(pinned.get()));
  std::string pid_line;
  for (std::string line; std::getline(info, line);) {
    if (line.starts_with("Pid:")) pid_line = line;
  }
  EXPECT_EQ(pid_line, "Pid:\t" + std::to_string(peer.pid()));
  // A process that holds no end of this connection: the pid a reused number would name.
  EXPECT_FALSE(peer_pidfd_by_holder(ours.get(), other.pid(), kProc));
  EXPECT_FALSE(peer_pidfd_by_holder(ours.get(), ::getpid(), kProc));
  // The peer gone, reaped or not: no pidfd.
  peer.release();
  ASSERT_TRUE(peer.reap());
  EXPECT_FALSE(peer_pidfd_by_holder(ours.get(), peer.pid(), kProc));
}

// ---- descendants ----------------------------------------------------------------------------

TEST(Descendants, FindsAChildAndItsGrandchild) {
  if (!fs::exists("/proc/self/task/" + std::to_string(::getpid()) + "/children")) {
    GTEST_SKIP() << "no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)";
  }
  Child child([] {
    const pid_t parent = ::getpid();
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(0);
      for (;;) ::pause();
    }
    return static_cast<int>(grandchild);
  });
  const auto grandchild = child.result();
  ASSERT_TRUE(grandchild && *grandchild > 0);
  EXPECT_EQ(sorted(descendants(kProc, ::getpid())), sorted({child.pid(), *grandchild}));
  EXPECT_EQ(descendants(kProc, child.pid()), std::vector<pid_t>{*grandchild});
  EXPECT_TRUE(descendants(kProc, *grandchild).empty());
  child.kill();
  EXPECT_TRUE(gone_within(*grandchild, 10s));
}

TEST(Descendants, FindsNothingBelowAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_TRUE(descendants(kProc, pid).empty());
}

// ---- process_uid ----------------------------------------------------------------------------

TEST(ProcessUid, IsTheUidOfAProcessWhoseRealAndEffectiveUidsAgree) {
  EXPECT_EQ(process_uid(kProc, ::getpid()), ::geteuid());
  if (::geteuid() != 0) return;
  Child nobody([] { return become_nobody(false); });
  ASSERT_EQ(nobody.result(), 0);
  EXPECT_EQ(process_uid(kProc, nobody.pid()), kNobody);
}

TEST(ProcessUid, IsNoneForMixedUidsOrAGoneProcess) {
  if (::geteuid() == 0) {
    Child mixed([] { return ::setresuid(kNobody, 0, 0) == 0 ? 0 : -errno; });
    ASSERT_EQ(mixed.result(), 0);
    EXPECT_EQ(process_uid(kProc, mixed.pid()), std::nullopt);
  }
  Child gone([] { return 0; });
  ASSERT_EQ(gone.result(), 0);
  const pid_t pid = gone.pid();
  gone.kill();
  EXPECT_EQ(process_uid(kProc, pid), std::nullopt);
}

// ---- origin ---------------------------------------------------------------------------------

TEST(Origin, IsTheWorkingDirectoryOfAChildThatChangedIt) {
  test::TempFile marker("x");
  const fs::path dir = fs::canonical(marker.dir());
  const std::string where = dir.string();
  Child child([where] { return ::chdir(where.c_str()) == 0 ? 0 : -errno; });
  ASSERT_EQ(child.result(), 0);
  const Origin found = origin(kProc, child.pid(), {});
  EXPECT_EQ(found.cwd, where);
  EXPECT_TRUE(found.env.empty());
  EXPECT_EQ(origin(kProc, ::getpid(), {}).cwd, fs::current_path().string());
}

TEST(Origin, SelectsTheEnvironmentInTheKeysOrderAndLeavesMissingKeysOut) {
  test::TempFile marker("x");
  const std::string where = fs::canonical(marker.dir()).string();
  ExecChild child({"/bin/sleep", "60"},
                  {"FOOBAR=long", "PATH=/usr/bin:/bin", "FOO=short", "EQ=a=b", "EMPTY=", "NOEQUALS",
                   "BAR=last"},
                  [where] { return ::chdir(where.c_str()) == 0 ? 0 : errno; });
  ASSERT_EQ(child.exec_error(), 0) << std::generic_category().message(child.exec_error());
  const Origin found =
      origin(kProc, child.pid(),
             {"BAR", "FOO", "MISSING", "EQ", "FO", "FOOBAR", "EMPTY", "NOEQUALS", "OOBAR"});
  EXPECT_EQ(found.cwd, where);
  EXPECT_EQ(found.env,
            (std::vector<std::string>{"BAR=last", "FOO=short", "EQ=a=b", "FOOBAR=long", "EMPTY="}));
}

TEST(Origin, ThrowsForAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_THROW(origin(kProc, pid, {}), std::system_error);
  EXPECT_THROW(origin(kProc, pid, {"PATH"}), std::system_error);
}

// ---- sandboxed ------------------------------------------------------------------------------

TEST(Sandboxed, IsFalseForThisProcessAndAPlainChild) {
  EXPECT_FALSE(sandboxed(kProc, ::getpid()));
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  EXPECT_FALSE(sandboxed(kProc, child.pid()));
}

TEST(Sandboxed, IsTrueForAChildInANewMountNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for unshare(CLONE_NEWNS)";
  Child child([] { return ::unshare(CLONE_NEWNS) == 0 ? 0 : errno; });
  const auto result = child.result();
  ASSERT_TRUE(result);
  if (*result == EPERM) GTEST_SKIP() << "unshare(CLONE_NEWNS) is not permitted here";
  ASSERT_EQ(*result, 0) << std::generic_category().message(*result);
  EXPECT_TRUE(sandboxed(kProc, child.pid()));
}

TEST(Sandboxed, IsTrueForNobodyUnderUnshareUrm) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs the child as nobody through setpriv";
  auto argv = test::as_nobody();
  argv.insert(argv.end(),
              {"/usr/bin/unshare", "-Urm", "/bin/sh", "-c", "echo ready; exec sleep 60"});
  test::RunningProcess process(argv);
  const auto line = process.read_line(10s);
  if (line != "ready") {
    const auto result = process.wait(5s);
    GTEST_SKIP() << "nobody cannot unshare -Urm here: " << result.err;
  }
  EXPECT_TRUE(sandboxed(kProc, process.pid()));
  EXPECT_EQ(process_uid(kProc, process.pid()), kNobody);
}

// A Landlock sandbox keeps the host's mount namespace; the mark stage 1 puts on every
// process of a sandbox tells it.
TEST(Sandboxed, IsTrueForAChildThatCarriesTheSandboxMark) {
  Child child([] {
    mark_this_process_sandboxed();
    return 0;
  });
  ASSERT_EQ(child.result(), 0);
  EXPECT_TRUE(sandboxed(kProc, child.pid()));
}

// Another user's process: read by prlimit(2) with CAP_SYS_RESOURCE, or from its
// /proc/<pid>/limits without (as root in a container that withholds the capability).
TEST(Sandboxed, TellsTheMarkOfAnotherUsersProcess) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to change uids";
  Child marked([] {
    const int became = become_nobody(false);
    if (became != 0) return became;
    mark_this_process_sandboxed();
    return 0;
  });
  Child unmarked([] { return become_nobody(false); });
  ASSERT_EQ(marked.result(), 0);
  ASSERT_EQ(unmarked.result(), 0);
  EXPECT_TRUE(carries_sandbox_mark(marked.pid()));
  EXPECT_FALSE(carries_sandbox_mark(unmarked.pid()));
}

TEST(Sandboxed, ThrowsForAGoneProcess) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_THROW(sandboxed(kProc, pid), std::system_error);
}

// ---- lock_owner -----------------------------------------------------------------------------

int lock(int fd, int command, short type, off_t start = 0, off_t length = 0) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return ::fcntl(fd, command, &lock) == 0 ? 0 : errno;
}

TEST(LockOwner, IsNoneWithoutALock) {
  HeldFile held;
  EXPECT_EQ(lock_owner(held.fd.get()), std::nullopt);
}

TEST(LockOwner, NamesTheChildHoldingAPosixWriteLock) {
  HeldFile held;
  const int fd = held.fd.get();
  Child locker([fd] { return lock(fd, F_SETLK, F_WRLCK); });
  ASSERT_EQ(locker.result(), 0);
  EXPECT_EQ(lock_owner(held.fd.get()), locker.pid());
  // Through another open file description of the same file, too.
  const UniqueFd other(::open(held.file.path().c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(lock_owner(other.get()), locker.pid());
  locker.release();
  ASSERT_TRUE(locker.reap());
  EXPECT_EQ(lock_owner(held.fd.get()), std::nullopt);
}

TEST(LockOwner, NamesTheChildHoldingAReadLockOnPartOfTheFile) {
  HeldFile held;
  const std::string path = held.file.path().string();
  Child locker([path] {
    const int fd = ::open(path.c_str(), O_RDONLY);
    return fd < 0 ? errno : lock(fd, F_SETLK, F_RDLCK, 10, 5);
  });
  ASSERT_EQ(locker.result(), 0);
  EXPECT_EQ(lock_owner(held.fd.get()), locker.pid());
}

TEST(LockOwner, DoesNotReportAnOpenFileDescriptionLockAsAPid) {
  HeldFile held;
  const std::string path = held.file.path().string();
  Child locker([path] {
    const int fd = ::open(path.c_str(), O_RDWR);
    return fd < 0 ? errno : lock(fd, F_OFD_SETLK, F_WRLCK);
  });
  ASSERT_EQ(locker.result(), 0);
  // The lock is there (a POSIX lock cannot be taken)...
  EXPECT_NE(lock(held.fd.get(), F_SETLK, F_WRLCK), 0);
  // ... but it belongs to no process.
  EXPECT_EQ(lock_owner(held.fd.get()), std::nullopt);
}

// ---- open_pidfd / running -------------------------------------------------------------------

bool stops_running_within(int pidfd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running(pidfd)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST(Pidfd, RunsUntilTheChildExitsAndStaysExitedAfterTheReap) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const UniqueFd pidfd = open_pidfd(child.pid());
  ASSERT_TRUE(pidfd);
  EXPECT_TRUE(running(pidfd.get()));
  child.release();
  // Exited, not yet reaped: a zombie runs no more.
  EXPECT_TRUE(stops_running_within(pidfd.get(), 10s));
  const auto status = child.reap();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_FALSE(running(pidfd.get()));
}

TEST(Pidfd, SeesAKilledChildStop) {
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const UniqueFd pidfd = open_pidfd(child.pid());
  ASSERT_TRUE(pidfd);
  ::kill(child.pid(), SIGKILL);
  EXPECT_TRUE(stops_running_within(pidfd.get(), 10s));
}

TEST(Pidfd, OpensForThisProcessAndNotForAReapedChild) {
  const UniqueFd self = open_pidfd(::getpid());
  ASSERT_TRUE(self);
  EXPECT_TRUE(running(self.get()));
  Child child([] { return 0; });
  ASSERT_EQ(child.result(), 0);
  const pid_t pid = child.pid();
  child.kill();
  EXPECT_FALSE(open_pidfd(pid));
}

}  // namespace
}  // namespace sandbox_host::broker
