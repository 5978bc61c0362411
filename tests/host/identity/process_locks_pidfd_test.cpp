// Who holds a lock (lock_owner), against children holding POSIX and open-file-description
// locks; and pidfds (open_pidfd, running) across a child's exit, death and reap.
#include "process_identity_harness.hpp"

namespace sandbox_host::broker {
namespace {

using namespace identity_harness;

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
