// [limits] held by the namespaces and the Landlock backend: a plugin launched with the real
// `sandbox-host run`, as root and as nobody, gets the configured rlimits, and a fork bomb, a
// file too large and a /tmp fill are stopped at their bounds while a second plugin of the
// same user still launches and answers.
#include "backend_case.hpp"
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Case = BackendCase;
using User = BackendCase::User;

// Forks children that sleep until told to go, as many as the kernel lets it; prints how many,
// then waits for its stdin to close and takes every child with it.
constexpr const char *kForkBomb = R"(
import os, sys
children = []
refused = 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        break
    if pid == 0:
        os.read(0, 1)
        os._exit(0)
    children.append(pid)
print("forked", len(children), "refused", refused, flush=True)
sys.stdin.read()
for pid in children:
    os.waitpid(pid, 0)
)";

class LimitsTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    // Under /var/tmp: TmpDir lies on the host's disk, as a gateway's would.
    std::string pattern = "/var/tmp/sandbox-host-limits-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    fs::permissions(dir_, fs::perms(0755));
    for (const char *sub : {"sock", "tmp"}) {
      fs::create_directory(dir_ / sub);
      if (!root()) {
        ASSERT_EQ(::chown((dir_ / sub).c_str(), kNobody, kNobody), 0);
      }
    }
  }

  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  bool root() const { return GetParam().user == User::root; }
  bool namespaces() const { return std::string(GetParam().backend) == "namespaces"; }

  void configure(const std::string &toml) const {
    std::ofstream(dir_ / "config.toml") << toml;
    fs::permissions(dir_ / "config.toml", fs::perms(0644));
  }

  std::vector<std::string> argv(const std::vector<std::string> &command) const {
    std::vector<std::string> out;
    if (!root()) out = as_nobody();
    out.insert(out.end(), {root() ? SANDBOX_HOST_EXE : shared_install().sandbox_host(), "run",
                           "--config", (dir_ / "config.toml").string(), "--socket-dir",
                           (dir_ / "sock").string(), "--tmp-dir", (dir_ / "tmp").string(), "--"});
    out.insert(out.end(), command.begin(), command.end());
    return out;
  }

  ProcessOptions options() const {
    ProcessOptions options = with_env(
        {"PATH=/usr/bin:/bin", std::string("CLAWPATROL_SANDBOX_BACKEND=") + GetParam().backend});
    options.cwd = dir_.string();
    options.timeout = 60s;
    return options;
  }

  ProcessResult bash(const std::string &script) const {
    return run_process(argv({"/bin/bash", "-c", script}), options());
  }

  fs::path dir_;
};

constexpr const char *kShowRlimits =
    "echo \"processes=$(ulimit -u) files=$(ulimit -n) file_kib=$(ulimit -f) core=$(ulimit -c)\"";

TEST_P(LimitsTest, APluginGetsTheDefaultRlimitsAndNoCoreDumps) {
  configure("");
  const ProcessResult result = bash(kShowRlimits);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "processes=1024 files=4096 file_kib=4194304 core=0\n");
}

TEST_P(LimitsTest, APluginsOwnLimitsGoOverTheLimitsTable) {
  configure(
      "[limits]\nprocesses = 77\nopen_files = 99\nfile_size = \"3M\"\n\n"
      "[plugins.bash.limits]\nopen_files = 55\n");
  const ProcessResult result = bash(kShowRlimits);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "processes=77 files=55 file_kib=3072 core=0\n");
}

TEST_P(LimitsTest, AFileOverTheBoundIsStoppedAndTheHostsDiskKeepsNoMore) {
  configure("[limits]\nfile_size = \"1M\"\n");
  const fs::path big = dir_ / "tmp/big";
  const ProcessResult result = bash("head -c 8M /dev/zero > " + big.string() + "; echo status=$?");
  ASSERT_EQ(result.code, 0) << result.err;
  // head is killed by SIGXFSZ: 128 + 25.
  EXPECT_EQ(result.out, "status=153\n") << result.err;
  EXPECT_EQ(fs::file_size(big), 1u << 20);
}

TEST_P(LimitsTest, TooManyOpenFilesAreRefused) {
  configure("[limits]\nopen_files = 32\n");
  const ProcessResult result = bash(
      "last=none; for i in $(seq 100); do exec {fd}</dev/null 2>/dev/null || break; last=$fd; "
      "done; echo last=$last");
  ASSERT_EQ(result.code, 0) << result.err;
  // bash hands out the lowest free descriptor from 10 up: the last one below the bound is 31.
  EXPECT_EQ(result.out, "last=31\n");
}

TEST_P(LimitsTest, AForkBombStopsAtTheBoundAndASecondPluginStillAnswers) {
  if (root()) {
    GTEST_SKIP() << "not enforced for root: the kernel exempts the initial user namespace's "
                    "uid 0 from RLIMIT_NPROC, and a launcher that is root stays uid 0 in the "
                    "sandbox; a cgroup's pids.max would bound it and is not built yet";
  }
  configure("[limits]\nprocesses = 40\n");
  Pipe stdin_pipe = make_pipe();
  ProcessOptions bomb_options = options();
  bomb_options.stdin_fd = stdin_pipe.read.get();
  RunningProcess bomb(argv({"/usr/bin/python3", "-c", kForkBomb}), bomb_options);
  const std::optional<std::string> line = bomb.read_line(30s);
  ASSERT_TRUE(line.has_value());
  std::istringstream words(*line);
  std::string forked_word, refused_word;
  int forked = -1, refused = -1;
  words >> forked_word >> forked >> refused_word >> refused;
  EXPECT_EQ(refused, 1) << *line;
  // The bomb and its children are at most 40. Under namespaces they are all the user's
  // processes in the sandbox's user namespace, so it forks up to the bound; under Landlock
  // RLIMIT_NPROC counts every process of the user's, on the host and in every sandbox
  // (other tests' too), so it gets at most that many and maybe none.
  EXPECT_LE(forked, 39) << *line;
  if (namespaces()) {
    EXPECT_GE(forked, 36) << *line;
  }

  const ProcessResult second = bash("echo answered");
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, "answered\n");

  stdin_pipe.write = UniqueFd();  // the bomb and its children see the end of their stdin
  const ProcessResult ended = bomb.wait(30s);
  EXPECT_EQ(ended.code, 0) << ended.err;
}

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
}

INSTANTIATE_TEST_SUITE_P(Backends, LimitsTest, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

}  // namespace
}  // namespace sandbox_host::test
