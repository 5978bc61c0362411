// A plugin with thousands of directories against the host's scratch watch, on both backends,
// as root and as nobody: the watch takes a bounded number of the launching user's inotify
// watches, which every program of that user shares, and still holds the plugin to
// scratch_size through what it does not watch.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ProcessResult;
using test::User;

// The inotify watches process pid holds, as its fdinfo lists them.
std::size_t inotify_watches(pid_t pid) {
  std::size_t count = 0;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fdinfo", ec)) {
    std::ifstream info(entry.path());
    for (std::string line; std::getline(info, line);) {
      if (line.starts_with("inotify wd:")) ++count;
    }
  }
  return count;
}

struct Case {
  User user;
  std::string backend;
};

class ManyDirectories : public ::testing::TestWithParam<Case> {};

TEST_P(ManyDirectories, CostABoundedNumberOfWatchesAndTheBytesAreStillCounted) {
  const test::UnprivilegedInstall install;
  const std::string plugin = install.add_binary(HOSTILE_PLUGIN);
  test::TempFile config("[limits]\nscratch_size = \"16M\"\n", "config.toml");
  fs::permissions(config.dir(), fs::perms(0755));
  fs::permissions(config.path(), fs::perms(0644));
  const test::TempFile audit("", "audit.log");
  std::vector<std::string> argv =
      GetParam().user == User::nobody ? test::as_nobody() : std::vector<std::string>{};
  argv.insert(argv.end(), {install.sandbox_host(), "run", "--config", config.path().string(),
                           "--backend", GetParam().backend, "--", plugin, "dirs", "3000", "64"});
  test::RunningProcess run(argv);
  const std::string made = run.read_line(60s).value_or("");
  if (made.empty()) {
    const ProcessResult failed = run.wait(1s);
    if (failed.err.find("does not work here") != std::string::npos) GTEST_SKIP() << failed.err;
    FAIL() << failed.err;
  }
  ASSERT_EQ(made, "dirs: 3000");
  // A count has seen the directories by now, and watched what it may.
  std::this_thread::sleep_for(1s);
  const std::size_t watches = inotify_watches(run.pid());
  EXPECT_GT(watches, 0u);
  EXPECT_LE(watches, 256u) << "3000 directories cost the launching user this many watches";
  // It sleeps 30 s once it wrote 64 MiB past a 16 MiB bound, unless the host stops it.
  const ProcessResult ended = run.wait(20s);
  EXPECT_FALSE(ended.timed_out) << "the plugin lived on past its bound: " << ended.err;
  EXPECT_NE(ended.err.find("rule=scratch-size-limit"), std::string::npos) << ended.err;
}

// The hostile plugin with plugin_args under the case's backend and user, with scratch_size
// 16M, run to its end (at most 25 s). Skips the test where the backend does not work.
ProcessResult run_under_16m(const Case &c, const std::vector<std::string> &plugin_args) {
  const test::UnprivilegedInstall install;
  const std::string plugin = install.add_binary(HOSTILE_PLUGIN);
  test::TempFile config("[limits]\nscratch_size = \"16M\"\n", "config.toml");
  fs::permissions(config.dir(), fs::perms(0755));
  fs::permissions(config.path(), fs::perms(0644));
  std::vector<std::string> argv =
      c.user == User::nobody ? test::as_nobody() : std::vector<std::string>{};
  argv.insert(argv.end(), {install.sandbox_host(), "run", "--config", config.path().string(),
                           "--backend", c.backend, "--", plugin});
  argv.insert(argv.end(), plugin_args.begin(), plugin_args.end());
  test::ProcessOptions options;
  options.timeout = 25s;
  return test::run_process(argv, options);
}

bool backend_missing(const ProcessResult &ended) {
  return ended.err.find("does not work here") != std::string::npos;
}

// Bytes whose last name and last descriptor are gone, kept on the disk by shared mappings:
// eight files of 8 MiB, each under the bound while it has a name.
TEST_P(ManyDirectories, BytesKeptByAMappingAloneAreCounted) {
  const ProcessResult ended = run_under_16m(GetParam(), {"hide", "8", "8"});
  if (backend_missing(ended)) GTEST_SKIP() << ended.err;
  EXPECT_FALSE(ended.timed_out) << "64 MiB kept by mappings past a 16 MiB bound: " << ended.err;
  EXPECT_NE(ended.err.find("rule=scratch-size-limit"), std::string::npos) << ended.err;
  EXPECT_NE(ended.err.find("in files with no name left, held open or mapped"), std::string::npos)
      << ended.err;
}

// Bytes whose last name and descriptor are gone, kept by descriptors in a unix socket's
// queue, which sits itself in another's queue: eight files of 8 MiB, each under the bound
// while it has a name. No count can see them; that they are kept is what stops the plugin.
TEST_P(ManyDirectories, BytesKeptByDescriptorsInFlightStopThePlugin) {
  const ProcessResult ended = run_under_16m(GetParam(), {"flight", "8", "8"});
  if (backend_missing(ended)) GTEST_SKIP() << ended.err;
  EXPECT_FALSE(ended.timed_out) << "64 MiB kept in flight past a 16 MiB bound: " << ended.err;
  // Stopped a second after the first file went in flight, before the attack was through.
  EXPECT_NE(ended.err.find("rule=scratch-in-flight"), std::string::npos) << ended.err;
  EXPECT_NE(ended.err.find("descriptor(s) in flight in its unix sockets' queues"),
            std::string::npos)
      << ended.err;
}

// A plugin that hands descriptors between its parts and takes each at once is not stopped,
// under the same bound, however long it goes on doing it.
TEST_P(ManyDirectories, DescriptorsTakenAtOnceAreNotStopped) {
  const ProcessResult ended = run_under_16m(GetParam(), {"pass", "500"});
  if (backend_missing(ended)) GTEST_SKIP() << ended.err;
  EXPECT_EQ(ended.code, 0) << ended.err;
  EXPECT_EQ(ended.out, "passed: 500\n") << ended.err;
  EXPECT_EQ(ended.err.find("rule="), std::string::npos) << ended.err;
}

INSTANTIATE_TEST_SUITE_P(
    Backends, ManyDirectories,
    ::testing::Values(Case{User::root, "landlock"}, Case{User::nobody, "landlock"},
                      Case{User::root, "namespaces"}, Case{User::nobody, "namespaces"}),
    [](const auto &info) { return info.param.backend + "_" + test::user_name(info.param.user); });

}  // namespace
}  // namespace sandbox_host
