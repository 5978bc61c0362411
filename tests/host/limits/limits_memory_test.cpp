// [limits] memory, held by the namespaces and the Landlock backend through the real
// `sandbox-host run`, as root and as nobody: a memory hog killed at the bound with one
// record, the default bound, and without a cgroup the bound as each process's rlimit (under
// which a Go plugin still starts).
#include "limits_harness.hpp"

namespace sandbox_host::test {
namespace {

using namespace limits_harness;

// Touches 256 MiB, a page at a time, then says so.
constexpr const char *kMemoryHog = R"(
import mmap
block = mmap.mmap(-1, 256 << 20)
for offset in range(0, 256 << 20, 4096):
    block[offset] = 1
print("touched", flush=True)
)";

TEST_P(LimitsTest, AMemoryHogIsKilledAtTheBoundWithOneRecordAndTheNextPluginAnswers) {
  if (!configure_with_cgroup("memory = \"64M\"\n")) GTEST_SKIP() << skip_;
  for (const bool prepared : {false, true}) {
    std::vector<std::string> command = argv({"/usr/bin/python3", "-c", kMemoryHog});
    if (prepared)
      command.insert(std::find(command.begin(), command.end(), "run") + 1, "--prepared");
    const ProcessResult hog = run_process(command, options());
    EXPECT_EQ(hog.code, 128 + SIGKILL) << (prepared ? "prepared: " : "") << hog.out << hog.err;
    EXPECT_EQ(hog.out, "");
    const std::string record =
        "rule=memory-limit: memory.limit_in_bytes 64M (swap included) reached: the kernel's "
        "OOM killer stopped 1 process";
    EXPECT_NE(hog.err.find(record), std::string::npos) << hog.err;
    EXPECT_EQ(hog.err.find(record), hog.err.rfind(record)) << hog.err;
    // The OOM killer's SIGKILL is the plugin's own end: run says so in one line too.
    // The audit's text on stderr is run's one line about the death: no second one.
    EXPECT_EQ(hog.err.find(" died: "), std::string::npos) << hog.err;
  }
  configure(root() ? "[limits]\nmemory = \"512M\"\n"
                   : "[limits]\ncgroup = \"" + delegated_->path() + "\"\nmemory = \"512M\"\n");
  const ProcessResult fits = run_process(argv({"/usr/bin/python3", "-c", kMemoryHog}), options());
  EXPECT_EQ(fits.code, 0) << fits.err;
  EXPECT_EQ(fits.out, "touched\n");
}

TEST_P(LimitsTest, TheDefaultMemoryBoundHolds) {
  if (!configure_with_cgroup("")) GTEST_SKIP() << skip_;
  // 2.5 GiB against the default 2G.
  const ProcessResult hog =
      run_process(argv({"/usr/bin/python3", "-c",
                        "import mmap\nb = mmap.mmap(-1, 2560 << 20)\n"
                        "for o in range(0, 2560 << 20, 4096): b[o] = 1\nprint('touched')"}),
                  options());
  EXPECT_EQ(hog.code, 128 + SIGKILL) << hog.out << hog.err;
  EXPECT_NE(hog.err.find("memory.limit_in_bytes 2G (swap included) reached"), std::string::npos)
      << hog.err;
}

// Touches argv[1] MiB of its own memory, a MiB at a time (bytearray writes every page), and
// says how far it got. Private memory: a shared mapping (mmap.mmap(-1, ...), kMemoryHog) is
// what RLIMIT_DATA does not count.
constexpr const char *kPrivateMemoryHog = R"(
import sys
chunks = []
try:
    for _ in range(int(sys.argv[1])):
        chunks.append(bytearray(1 << 20))
except MemoryError:
    print("refused after", len(chunks), "MiB", flush=True)
    sys.exit(0)
print("touched", len(chunks), "MiB", flush=True)
)";

// RLIMIT_DATA as ulimit -d shows it: KiB, or "unlimited".
std::string ulimit_data_words(rlim_t bytes) {
  return bytes == RLIM_INFINITY ? "unlimited" : std::to_string(bytes / 1024);
}

TEST_P(LimitsTest, WithoutACgroupEachProcessIsHeldToTheMemoryBound) {
  // A container that delegates no cgroup: RLIMIT_DATA is what holds memory then.
  configure("[limits]\ncgroup = \"off\"\nmemory = \"256M\"\n");
  for (const bool prepared : {false, true}) {
    const std::string how = prepared ? "prepared" : "run";
    auto launch = [&](const std::vector<std::string> &plugin) {
      std::vector<std::string> command = argv(plugin);
      if (prepared)
        command.insert(std::find(command.begin(), command.end(), "run") + 1, "--prepared");
      return run_process(command, options());
    };
    const ProcessResult limit = launch({"/bin/bash", "-c", "ulimit -d"});
    EXPECT_EQ(limit.out, "262144\n") << how << ": " << limit.err;
    const ProcessResult hog = launch({"/usr/bin/python3", "-c", kPrivateMemoryHog, "1024"});
    ASSERT_EQ(hog.code, 0) << how << ": " << hog.err;
    // Refused short of the bound: python3's own memory counts too.
    int refused_after = -1;
    EXPECT_EQ(std::sscanf(hog.out.c_str(), "refused after %d MiB", &refused_after), 1)
        << how << ": " << hog.out;
    EXPECT_GT(refused_after, 128) << how << ": " << hog.out;
    EXPECT_LT(refused_after, 256) << how << ": " << hog.out;
    const ProcessResult fits = launch({"/usr/bin/python3", "-c", kPrivateMemoryHog, "64"});
    EXPECT_EQ(fits.out, "touched 64 MiB\n") << how << ": " << fits.err;
  }
}

TEST_P(LimitsTest, WithoutACgroupTheDefaultMemoryBoundIsEachProcesssRlimit) {
  configure("[limits]\ncgroup = \"off\"\n");
  const ProcessResult limit = bash("ulimit -d");
  EXPECT_EQ(limit.out, "2097152\n") << limit.err;
}

TEST_P(LimitsTest, WithACgroupMemoryIsTheCgroupsAloneAndNoRlimit) {
  if (!configure_with_cgroup("memory = \"256M\"\n")) GTEST_SKIP() << skip_;
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_DATA, &own), 0);
  // The plugin keeps the launcher's RLIMIT_DATA; the cgroup's memory.limit_in_bytes holds it.
  const ProcessResult limit = bash("ulimit -d");
  EXPECT_EQ(limit.out, ulimit_data_words(own.rlim_cur) + "\n") << limit.err;
}

TEST_P(LimitsTest, AGoPluginStartsUnderTheMemoryRlimit) {
  if (!fs::exists(LIMITS_GO_PLUGIN)) {
    GTEST_SKIP() << "no " << LIMITS_GO_PLUGIN
                 << ": Go or go-plugin was missing at configure time (scripts/setup.sh installs "
                    "golang-go and golang-github-hashicorp-go-plugin-dev)";
  }
  const std::string plugin =
      root() ? std::string(LIMITS_GO_PLUGIN) : shared_install().add_binary(LIMITS_GO_PLUGIN);
  // Go reserves about 1 GiB of address space at its start: under an RLIMIT_AS of 256M it
  // would not start at all, under RLIMIT_DATA it does.
  for (const char *memory : {"\"2G\"", "\"256M\""}) {
    configure(std::string("[limits]\ncgroup = \"off\"\nmemory = ") + memory + "\n");
    std::vector<std::string> command = argv({plugin});
    // Before the "--" that ends run's options (as_nobody's setpriv has one of its own).
    command.insert(
        std::find(std::find(command.begin(), command.end(), "run"), command.end(), "--"),
        {"--env", "SANDBOX_HOST_TEST_PLUGIN=reporter", "--env", "PLUGIN_PROTOCOL_VERSIONS=1"});
    RunningProcess served(command, options());
    const std::optional<std::string> handshake = served.read_line(60s);
    ASSERT_TRUE(handshake) << "memory " << memory << ": " << served.wait(5s).err;
    EXPECT_EQ(handshake->rfind("1|1|unix|", 0), 0u) << "memory " << memory << ": " << *handshake;
  }
}

}  // namespace
}  // namespace sandbox_host::test
