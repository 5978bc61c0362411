// [limits] held by the namespaces and the Landlock backend: a plugin launched with the real
// `sandbox-host run`, as root and as nobody, gets the configured rlimits and its own cgroup,
// and a fork bomb, a memory hog, a CPU spin, a file too large and a /tmp fill are stopped at
// their bounds while a second plugin of the same user still launches and answers. Root's
// launches use the cgroups `auto` finds; nobody's a cgroup the test delegates to it, as an
// operator would.
#include "backend_case.hpp"
#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include <sandbox_host/cgroup_mounts.hpp>

#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Case = BackendCase;
using User = BackendCase::User;

// Forks children that sleep until told to go, as many as the kernel lets it up to argv[1];
// prints how many, then waits for its stdin to close and takes every child with it.
constexpr const char *kForkBomb = R"(
import os, sys
children = []
refused = 0
for _ in range(int(sys.argv[1])):
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

// A cgroup in each v1 hierarchy of memory, pids and cpu, owned by nobody, as an operator
// delegates one to the user a host runs as. nullopt where this host has no such hierarchies
// (on cgroup v2, moving nobody's stage 1 into it would need nobody's launcher inside it).
class DelegatedCgroup {
 public:
  static std::optional<DelegatedCgroup> make() {
    const cgroup::CgroupMounts mounts = cgroup::CgroupMounts::of_this_host();
    DelegatedCgroup made;
    made.path_ = "/sandbox-host-test-" + std::to_string(::getpid());
    for (const char *controller : {"memory", "pids", "cpu"}) {
      const auto mount = mounts.v1.find(controller);
      if (mount == mounts.v1.end()) return std::nullopt;
      const fs::path dir = mount->second / made.path_.substr(1);
      if (::mkdir(dir.c_str(), 0755) != 0) return std::nullopt;
      made.dirs_.push_back(dir);
      for (const fs::path &owned : {dir, dir / "cgroup.procs", dir / "tasks"}) {
        if (::chown(owned.c_str(), kNobody, kNobody) != 0) return std::nullopt;
      }
    }
    return made;
  }
  DelegatedCgroup() = default;
  DelegatedCgroup(DelegatedCgroup &&other) noexcept
      : path_(std::move(other.path_)), dirs_(std::exchange(other.dirs_, {})) {}
  DelegatedCgroup &operator=(DelegatedCgroup &&other) noexcept {
    std::swap(path_, other.path_);
    std::swap(dirs_, other.dirs_);
    return *this;
  }
  ~DelegatedCgroup() {
    for (const fs::path &dir : dirs_) ::rmdir(dir.c_str());
  }
  const std::string &path() const { return path_; }
  // The launches' cgroups left in it.
  std::size_t children() const {
    std::size_t count = 0;
    for (const fs::path &dir : dirs_) {
      for (const auto &entry : fs::directory_iterator(dir)) count += entry.is_directory();
    }
    return count;
  }

 private:
  std::string path_;
  std::vector<fs::path> dirs_;
};

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
    delegated_.reset();
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }

  bool root() const { return GetParam().user == User::root; }

  // Writes the [limits] table with body, in the cgroup this case's launches get. False, with
  // skip_ saying why, where this host gives them none.
  bool configure_with_cgroup(const std::string &body) {
    if (root()) {
      const CgroupPlacement placement = CgroupPlacement::find("auto");
      if (placement.version() == CgroupPlacement::Version::none) {
        skip_ = "no cgroup for root's launches here: " + placement.description();
        return false;
      }
      configure("[limits]\n" + body);
      return true;
    }
    delegated_ = DelegatedCgroup::make();
    if (!delegated_) {
      skip_ =
          "this host has no cgroup v1 hierarchies of memory, pids and cpu to delegate to "
          "nobody";
      return false;
    }
    configure("[limits]\ncgroup = \"" + delegated_->path() + "\"\n" + body);
    return true;
  }
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

  // kForkBomb, trying `tries` forks, once it could fork no more.
  struct ForkBomb {
    Pipe stdin_pipe;
    std::unique_ptr<RunningProcess> process;
    std::string line;  // what it printed
    int forked = -1, refused = -1;

    // Lets it and its children end.
    ProcessResult release() {
      stdin_pipe.write = UniqueFd();
      return process->wait(60s);
    }
  };
  ForkBomb start_fork_bomb(int tries) const {
    ForkBomb bomb{make_pipe(), nullptr, {}};
    ProcessOptions bomb_options = options();
    bomb_options.stdin_fd = bomb.stdin_pipe.read.get();
    bomb.process = std::make_unique<RunningProcess>(
        argv({"/usr/bin/python3", "-c", kForkBomb, std::to_string(tries)}), bomb_options);
    if (const std::optional<std::string> line = bomb.process->read_line(60s)) {
      bomb.line = *line;
      std::istringstream words(*line);
      std::string forked_word, refused_word;
      words >> forked_word >> bomb.forked >> refused_word >> bomb.refused;
    }
    return bomb;
  }

  // This case's backend's rows of `sandbox-host probe --json` under the config, by limit.
  struct ProbeRows {
    std::map<std::string, Poco::JSON::Object::Ptr> by_limit;
    std::string out;
  };
  ProbeRows probe_rows() const {
    std::vector<std::string> command = argv({});
    command.erase(std::find(command.begin(), command.end(), "run"), command.end());
    command.insert(command.end(), {"probe", "--json", "--config", (dir_ / "config.toml").string()});
    const ProcessResult probe = run_process(command, options());
    ProbeRows rows{{}, probe.out + probe.err};
    if (probe.code != 0) return rows;
    Poco::JSON::Parser parser;
    const auto out = parser.parse(probe.out).extract<Poco::JSON::Object::Ptr>();
    const auto backend =
        out->getObject("limits")->getObject("backends")->getArray(GetParam().backend);
    for (std::size_t i = 0; backend && i < backend->size(); ++i) {
      const auto row = backend->getObject(static_cast<unsigned>(i));
      rows.by_limit[row->getValue<std::string>("limit")] = row;
    }
    return rows;
  }

  fs::path dir_;
  std::optional<DelegatedCgroup> delegated_;
  std::string skip_;
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
  // Root is bound by the cgroup alone: the kernel exempts the initial user namespace's uid 0
  // from RLIMIT_NPROC, and a launcher that is root stays uid 0 in the sandbox.
  if (!configure_with_cgroup("processes = 40\n")) GTEST_SKIP() << skip_;
  ForkBomb bomb = start_fork_bomb(400);
  ASSERT_FALSE(bomb.line.empty());
  EXPECT_EQ(bomb.refused, 1) << bomb.line;
  // The cgroup's pids.max is 40 and 3 of the sandbox's own (stage 1, the init and its relay
  // thread under namespaces). Under namespaces RLIMIT_NPROC counts the user's processes in
  // the sandbox's user namespace, so it forks up to the bound; under Landlock it counts every
  // process of the user's, on the host and in every sandbox (other tests' too), so nobody's
  // bomb gets at most that many and maybe none.
  EXPECT_LE(bomb.forked, namespaces() ? 40 : 42) << bomb.line;
  if (namespaces() || root()) {
    EXPECT_GE(bomb.forked, 36) << bomb.line;
  }

  const ProcessResult second = bash("echo answered");
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, "answered\n");

  const ProcessResult ended = bomb.release();
  EXPECT_EQ(ended.code, 0) << ended.err;
  // Root's bomb met pids.max, which the end of the launch records; nobody's may have met
  // RLIMIT_NPROC first.
  if (root()) {
    EXPECT_NE(ended.err.find("rule=pids-limit: pids.max 43 reached ([limits] processes 40"),
              std::string::npos)
        << ended.err;
  }
}

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

TEST_P(LimitsTest, ACpuBoundHoldsASpinningPluginToItsQuota) {
  if (!configure_with_cgroup("cpu = 0.25\n")) GTEST_SKIP() << skip_;
  // Spins for 1.5 s of wall-clock time and prints the CPU time it got: unbounded, about 1.5 s
  // (less on a busy host, never more); held to a quarter of a CPU, about 0.375 s.
  const ProcessResult spin =
      run_process(argv({"/usr/bin/python3", "-c",
                        "import time\nstart = time.monotonic()\n"
                        "while time.monotonic() - start < 1.5: pass\nprint(time.process_time())"}),
                  options());
  ASSERT_EQ(spin.code, 0) << spin.err;
  EXPECT_LT(std::stod(spin.out), 0.75) << spin.out;
}

TEST_P(LimitsTest, WhatAPluginLeavesBehindEndsWithItAndItsCgroupGoes) {
  if (!configure_with_cgroup("")) GTEST_SKIP() << skip_;
  // A daemon in a session of its own, which outlives the plugin's exit unless its cgroup's
  // end takes it.
  const std::string marker = "7" + std::to_string(::getpid() % 100000) + ".25";
  const ProcessResult result =
      bash("setsid sleep " + marker + " < /dev/null > /dev/null 2>&1 & echo started");
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "started\n");
  const ProcessResult left = run_process({"/usr/bin/pgrep", "-f", "sleep " + marker}, {});
  EXPECT_EQ(left.out, "") << "the daemon outlived its plugin";
  if (delegated_) {
    EXPECT_EQ(delegated_->children(), 0u);
  }
}

TEST_P(LimitsTest, ProbeSaysWhichLimitsHoldHereAndWhyNot) {
  configure("");
  const ProbeRows probe = probe_rows();
  ASSERT_FALSE(probe.by_limit.empty()) << probe.out;
  const auto &by_limit = probe.by_limit;
  const CgroupPlacement placement = CgroupPlacement::find("auto");
  const bool cgroups = root() && placement.bounds("memory");
  // Root's auto cgroups hold memory; nobody has none delegated by default, so each process's
  // RLIMIT_DATA holds it, which probe says with what that leaves out.
  EXPECT_TRUE(by_limit.at("memory")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("memory")->getValue<std::string>("value"), "2G");
  const auto memory_by = by_limit.at("memory")->getArray("by");
  ASSERT_TRUE(memory_by) << probe.out;
  ASSERT_EQ(memory_by->size(), 1u) << probe.out;
  EXPECT_EQ(memory_by->getElement<std::string>(0).rfind(
                cgroups ? "cgroup v" : "RLIMIT_DATA per process (no cgroup)", 0),
            0u)
      << probe.out;
  // RLIMIT_NPROC binds nobody, never root.
  EXPECT_EQ(by_limit.at("processes")->getValue<bool>("enforced"),
            !root() || placement.bounds("pids"))
      << probe.out;
  EXPECT_TRUE(by_limit.at("open_files")->getValue<bool>("enforced"));
  EXPECT_EQ(by_limit.at("tmp_size")->getValue<bool>("enforced"), namespaces()) << probe.out;
  EXPECT_TRUE(by_limit.at("scratch_size")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("scratch_size")->getValue<std::string>("value"), "1G");
  EXPECT_TRUE(by_limit.at("scratch_files")->getValue<bool>("enforced")) << probe.out;
  // Off unless the operator sets it.
  EXPECT_FALSE(by_limit.at("lifetime")->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(by_limit.at("lifetime")->getValue<std::string>("value"), "unlimited");
}

TEST_P(LimitsTest, ProbeSaysTheMemoryRlimitHoldsWithoutACgroup) {
  configure("[limits]\ncgroup = \"off\"\nmemory = \"256M\"\n");
  const ProbeRows probe = probe_rows();
  ASSERT_EQ(probe.by_limit.count("memory"), 1u) << probe.out;
  const Poco::JSON::Object::Ptr memory = probe.by_limit.at("memory");
  EXPECT_TRUE(memory->getValue<bool>("enforced")) << probe.out;
  EXPECT_EQ(memory->getValue<std::string>("value"), "256M");
  const auto by = memory->getArray("by");
  ASSERT_TRUE(by) << probe.out;
  ASSERT_EQ(by->size(), 1u) << probe.out;
  // The mechanism, then what it leaves out.
  const std::string how = by->getElement<std::string>(0);
  EXPECT_EQ(how.rfind("RLIMIT_DATA per process (no cgroup)", 0), 0u) << how;
  EXPECT_NE(how.find("processes times memory"), std::string::npos) << how;
  EXPECT_NE(how.find("shared memory"), std::string::npos) << how;
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
  const ProcessResult fill = bash(
      "head -c 600M /dev/zero > /tmp/fill 2>/dev/null; echo tmp=$(stat -c %s /tmp/fill); "
      "head -c 100M /dev/zero > /dev/shm/fill 2>/dev/null; echo shm=$(stat -c %s /dev/shm/fill)");
  ASSERT_EQ(fill.code, 0) << fill.err;
  EXPECT_EQ(fill.out, "tmp=536870912\nshm=67108864\n");
}

TEST_P(LimitsTest, TheDefaultProcessBoundStopsAForkBomb) {
  // Root is bound by the cgroup's pids.max alone (RLIMIT_NPROC binds no uid 0).
  if (root() && !configure_with_cgroup("")) GTEST_SKIP() << skip_;
  if (!root()) configure("");
  ForkBomb bomb = start_fork_bomb(1500);
  ASSERT_FALSE(bomb.line.empty());
  EXPECT_EQ(bomb.refused, 1) << bomb.line;
  // 1024 processes and threads, the bomb itself among them (and, for root, 3 of the sandbox's
  // own on top); under Landlock RLIMIT_NPROC counts nobody's other processes too.
  EXPECT_LE(bomb.forked, 1026) << bomb.line;
  if (namespaces() || root()) {
    EXPECT_GE(bomb.forked, 1000) << bomb.line;
  }
  const ProcessResult ended = bomb.release();
  EXPECT_EQ(ended.code, 0) << ended.err;
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

std::size_t occurrences(const std::string &text, const std::string &part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

TEST_P(LimitsTest, AThreadPidsMaxRefusedEndsThePluginWithOneRecordAndALine) {
  if (!root()) {
    GTEST_SKIP() << "as nobody RLIMIT_NPROC bounds the same tasks and may refuse first; "
                    "death_report_test.cpp tells that death";
  }
  // JSON records on stderr: run's line about the death comes beside them.
  if (!configure_with_cgroup("processes = 40\n\n[audit]\nformat = \"json\"\n")) {
    GTEST_SKIP() << skip_;
  }
  // Threads until one is refused, then abort(), as node does.
  const ProcessResult ended = run_process(argv({DEATH_PLUGIN, "threads"}), options());
  EXPECT_EQ(ended.code, 128 + SIGABRT) << ended.err;
  EXPECT_EQ(occurrences(ended.err, "\"rule\":\"pids-limit\""), 1u) << ended.err;
  EXPECT_EQ(occurrences(ended.err, "\n"), 3u) << ended.err;  // the plugin's, the record, the line
  EXPECT_NE(ended.err.find("sandbox-host: plugin death_plugin died: pids.max 43 reached ([limits] "
                           "processes 40 and 3 of the sandbox's own)"),
            std::string::npos)
      << ended.err;
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

TEST_P(LimitsTest, ALifetimeEndsThePluginAndWhatItStartedWithOneRecord) {
  for (const bool with_cgroup : {true, false}) {
    const std::string body = "lifetime = 2\n";
    if (with_cgroup) {
      if (!configure_with_cgroup(body)) continue;
    } else {
      configure("[limits]\ncgroup = \"off\"\n" + body);
    }
    const std::string marker =
        "8" + std::to_string(::getpid() % 100000) + (with_cgroup ? ".5" : ".75");
    const ProcessResult ran =
        bash("setsid sleep " + marker + " < /dev/null > /dev/null 2>&1 & sleep 30; echo slept");
    const std::string where = with_cgroup ? "in a cgroup" : "without a cgroup";
    EXPECT_EQ(ran.code, 128 + SIGKILL) << where << ": " << ran.out << ran.err;
    EXPECT_EQ(ran.out, "") << where;
    EXPECT_EQ(occurrences(ran.err,
                          "rule=lifetime-limit: ran for its lifetime of 2s: the host "
                          "stopped it"),
              1u)
        << where << ": " << ran.err;
    const ProcessResult left = run_process({"/usr/bin/pgrep", "-f", "sleep " + marker}, {});
    EXPECT_EQ(left.out, "") << where << ": what the plugin started outlived its lifetime";
    delegated_.reset();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, LimitsTest, ::testing::ValuesIn(kLinuxBackendCases),
                         backend_case_name);

}  // namespace
}  // namespace sandbox_host::test
