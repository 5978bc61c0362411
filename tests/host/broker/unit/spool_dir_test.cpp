// The spool directory the broker accepts: its own, not open to others, served by one
// broker at a time.
#include <sandbox_host/host/broker/spool.hpp>

#include <gtest/gtest.h>
#include <fixtures.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace sandbox_host::broker {
namespace {

namespace fs = std::filesystem;

std::string refusal(const fs::path &dir) {
  try {
    Spool spool(dir, true);
  } catch (const std::system_error &e) {
    return e.what();
  }
  return "(taken)";
}

class SpoolDir : public testing::Test {
 protected:
  SpoolDir() : root_("", "unused") {}
  fs::path state() const { return root_.dir() / "state"; }
  test::TempFile root_;
};

TEST_F(SpoolDir, CreatesAPrivateSpoolAndTakesItsLock) {
  Spool spool(spool_dir(state()), true);
  struct stat status {};
  ASSERT_EQ(::stat(spool_dir(state()).c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0700u);
  EXPECT_EQ(status.st_uid, ::geteuid());
  EXPECT_TRUE(fs::exists(spool_dir(state()) / kBrokerLockFile));
  EXPECT_GE(spool.wake_fd(), 0);
}

TEST_F(SpoolDir, RefusesASpoolAnotherBrokerServes) {
  Spool first(spool_dir(state()), true);
  EXPECT_EQ(refusal(spool_dir(state())), "spool " + spool_dir(state()).string() +
                                             " is already served by another broker: Device or "
                                             "resource busy");
}

TEST_F(SpoolDir, RefusesASpoolOthersMayWrite) {
  fs::create_directories(spool_dir(state()));
  ::chmod(spool_dir(state()).c_str(), 0777);
  EXPECT_EQ(refusal(spool_dir(state())),
            "spool " + spool_dir(state()).string() +
                " is writable by other users (mode 0777); make it 0700: Operation not permitted");
}

TEST_F(SpoolDir, RefusesASpoolInADirectoryAnotherUserOwns) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
  fs::create_directories(state());
  ASSERT_EQ(::chown(state().c_str(), test::kNobody, test::kNobody), 0);
  EXPECT_EQ(refusal(spool_dir(state())),
            "the spool's directory " + state().string() +
                " may be changed by another user; make it the broker's own, mode 0755 or "
                "stricter: Operation not permitted");
}

TEST_F(SpoolDir, WithoutWatchingThereIsNoWakeDescriptor) {
  Spool spool(spool_dir(state()), false);
  EXPECT_EQ(spool.wake_fd(), -1);
}

}  // namespace
}  // namespace sandbox_host::broker
