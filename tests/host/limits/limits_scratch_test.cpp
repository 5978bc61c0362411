// [limits] on a plugin's scratch space, held by the namespaces and the Landlock backend
// through the real `sandbox-host run`, as root and as nobody: the sandbox's /tmp and /dev/shm,
// and SocketDir and TmpDir filled, with many files, hidden writes or a directory the host
// cannot read, stopped near their bound with one record.
#include "limits_harness.hpp"

namespace sandbox_host::test {
namespace {

using namespace limits_harness;

TEST_P(LimitsTest, TheSandboxsTmpAndShmHoldNoMoreThanTheirBound) {
  if (!namespaces()) {
    GTEST_SKIP() << "the landlock backend gives a plugin no /tmp of its own: it reaches only "
                    "its TmpDir and SocketDir on the host, which no tmpfs bounds";
  }
  configure("[limits]\ntmp_size = \"4M\"\ntmp_inodes = 64\nshm_size = \"2M\"\n");
  const ProcessResult result = bash(
      "head -c 16M /dev/zero > /tmp/fill 2>/dev/null; echo tmp=$(stat -c %s /tmp/fill); "
      "head -c 16M /dev/zero > /dev/shm/fill 2>/dev/null; echo shm=$(stat -c %s /dev/shm/fill); "
      "n=0; for i in $(seq 200); do : > /tmp/f$i 2>/dev/null || break; n=$((n+1)); done; "
      "echo files=$n; "
      "n=0; for i in $(seq 200); do : > /dev/shm/f$i 2>/dev/null || break; n=$((n+1)); done; "
      "echo shm_files=$n");
  ASSERT_EQ(result.code, 0) << result.err;
  // In each, the root inode and the fill take two of the 64.
  EXPECT_EQ(result.out, "tmp=4194304\nshm=2097152\nfiles=62\nshm_files=62\n");
}

TEST_P(LimitsTest, TheDefaultTmpIsBounded) {
  if (!namespaces()) GTEST_SKIP() << "the landlock backend gives a plugin no /tmp of its own";
  configure("");
  const ProcessResult result = bash("stat -f -c '%b %S %c' /tmp; stat -f -c '%b %S' /dev/shm");
  ASSERT_EQ(result.code, 0) << result.err;
  std::istringstream fields(result.out);
  unsigned long long blocks = 0, block_size = 0, inodes = 0, shm_blocks = 0, shm_block_size = 0;
  fields >> blocks >> block_size >> inodes >> shm_blocks >> shm_block_size;
  EXPECT_EQ(blocks * block_size, 512ull << 20) << result.out;
  EXPECT_EQ(inodes, 65536u) << result.out;
  EXPECT_EQ(shm_blocks * shm_block_size, 64ull << 20) << result.out;
  const ProcessResult fill = bash(
      "head -c 600M /dev/zero > /tmp/fill 2>/dev/null; echo tmp=$(stat -c %s /tmp/fill); "
      "head -c 100M /dev/zero > /dev/shm/fill 2>/dev/null; echo shm=$(stat -c %s /dev/shm/fill)");
  ASSERT_EQ(fill.code, 0) << fill.err;
  EXPECT_EQ(fill.out, "tmp=536870912\nshm=67108864\n");
}

// The bytes the host's disk holds in the plugin's SocketDir and TmpDir now.
std::uint64_t allocated_below(const fs::path &dir) {
  std::uint64_t bytes = 0;
  for (const auto &entry : fs::recursive_directory_iterator(dir)) {
    struct stat st {};
    if (::lstat(entry.path().c_str(), &st) == 0)
      bytes += static_cast<std::uint64_t>(st.st_blocks) * 512;
  }
  return bytes;
}

TEST_P(LimitsTest, ASocketDirOrTmpDirFillIsStoppedNearItsBoundWithOneRecord) {
  configure("[limits]\nscratch_size = \"32M\"\n");
  for (const bool prepared : {false, true}) {
    for (const char *dir : {"sock", "tmp"}) {
      const std::string where = std::string(dir) + (prepared ? ", prepared" : "");
      std::vector<std::string> command =
          argv({"/bin/bash", "-c",
                "head -c 6000M /dev/zero > " + (dir_ / dir / "fill").string() + "; echo wrote"});
      if (prepared)
        command.insert(std::find(command.begin(), command.end(), "run") + 1, "--prepared");
      const ProcessResult fill = run_process(command, options());
      EXPECT_EQ(fill.code, 128 + SIGKILL) << where << ": " << fill.out << fill.err;
      EXPECT_EQ(fill.out, "") << where;
      EXPECT_EQ(
          occurrences(fill.err, "rule=scratch-size-limit: SocketDir " + (dir_ / "sock").string() +
                                    " and TmpDir " + (dir_ / "tmp").string() +
                                    " held more than scratch_size 32M: "),
          1u)
          << where << ": " << fill.err;
      // Stopped within moments of the bound: far from the 6000M it tried to write.
      EXPECT_LT(allocated_below(dir_ / dir), std::uint64_t{512} << 20) << where;
      fs::remove(dir_ / dir / "fill");
    }
  }
}

TEST_P(LimitsTest, TheDefaultScratchBoundHolds) {
  configure("");
  for (const char *dir : {"sock", "tmp"}) {
    const ProcessResult fill =
        bash("head -c 6000M /dev/zero > " + (dir_ / dir / "fill").string() + "; echo wrote");
    EXPECT_EQ(fill.code, 128 + SIGKILL) << dir << ": " << fill.out << fill.err;
    EXPECT_EQ(occurrences(fill.err, "held more than scratch_size 1G: "), 1u)
        << dir << ": " << fill.err;
    EXPECT_LT(allocated_below(dir_ / dir), std::uint64_t{3} << 29) << dir;
    fs::remove(dir_ / dir / "fill");
  }
}

TEST_P(LimitsTest, ManyFilesAreStoppedAtTheirBound) {
  configure("[limits]\nscratch_files = 300\n");
  const ProcessResult files =
      bash("cd " + (dir_ / "sock").string() +
           " && mkdir d && for i in $(seq 5000); do : > d/f$i || break; done; "
           "echo made");
  EXPECT_EQ(files.code, 128 + SIGKILL) << files.out << files.err;
  EXPECT_EQ(files.out, "");
  EXPECT_EQ(occurrences(files.err, "held more than scratch_files 300: "), 1u) << files.err;
  std::size_t names = 0;
  for ([[maybe_unused]] const auto &entry : fs::recursive_directory_iterator(dir_ / "sock"))
    ++names;
  EXPECT_LT(names, 5000u);
}

// What no walk of the directories finds still counts: a file open with no name left, and
// bytes written through a shared mapping, which raise no inotify event.
TEST_P(LimitsTest, HiddenWritesCountAgainstTheScratchBound) {
  configure("[limits]\nscratch_size = \"32M\"\n");
  const ProcessResult unlinked =
      bash("exec 3> " + (dir_ / "tmp/gone").string() + "; rm " + (dir_ / "tmp/gone").string() +
           "; head -c 6000M /dev/zero >&3; echo wrote");
  EXPECT_EQ(unlinked.code, 128 + SIGKILL) << unlinked.out << unlinked.err;
  EXPECT_NE(unlinked.err.find("of it in files with no name left, held open or mapped"),
            std::string::npos)
      << unlinked.err;
  const ProcessResult mapped = run_process(argv({"/usr/bin/python3", "-c",
                                                 "import mmap, os, time\n"
                                                 "fd = os.open('" +
                                                     (dir_ / "tmp/mapped").string() +
                                                     "', os.O_RDWR | os.O_CREAT)\n"
                                                     "os.ftruncate(fd, 1 << 30)\n"
                                                     "m = mmap.mmap(fd, 1 << 30)\n"
                                                     "for o in range(0, 1 << 30, 4096): m[o] = 1\n"
                                                     "time.sleep(5)\nprint('kept')"}),
                                           options());
  EXPECT_EQ(mapped.code, 128 + SIGKILL) << mapped.out << mapped.err;
  EXPECT_EQ(mapped.out, "");
  EXPECT_NE(mapped.err.find("held more than scratch_size 32M"), std::string::npos) << mapped.err;
}

TEST_P(LimitsTest, ADirectoryTheHostCannotReadStopsThePlugin) {
  if (root()) GTEST_SKIP() << "root reads every directory, whatever its mode";
  configure("");
  const ProcessResult hidden = bash("mkdir " + (dir_ / "tmp/hidden").string() + " && chmod 000 " +
                                    (dir_ / "tmp/hidden").string() + " && sleep 10; echo kept");
  EXPECT_EQ(hidden.code, 128 + SIGKILL) << hidden.out << hidden.err;
  EXPECT_NE(hidden.err.find("rule=scratch-unreadable: left a directory the host cannot read in "
                            "SocketDir"),
            std::string::npos)
      << hidden.err;
}

}  // namespace
}  // namespace sandbox_host::test
