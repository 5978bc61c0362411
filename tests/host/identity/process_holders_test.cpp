// Who holds a file (holders, holds), against real processes: this one, children that kept or
// closed it, threads, other users; and the peer of a unix socket, known by the process that
// holds the other end.
#include "process_identity_harness.hpp"

namespace sandbox_host::broker {
namespace {

using namespace identity_harness;

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

}  // namespace
}  // namespace sandbox_host::broker
