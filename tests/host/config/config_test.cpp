#include "config_error.hpp"
#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <sched.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

namespace sandbox_host {
namespace {

using test::TempFile;

TEST(Config, FullFileLoads) {
  TempFile file(R"(
module_dirs = ["/opt/modules", "/usr/lib/sandbox-host/modules"]
[backends]
enabled = ["namespaces", "landlock", "off"]
priority = ["landlock", "namespaces"]
[ops]
enabled = ["ping", "cap-slot"]
[audit]
format = "json"
path = "/var/log/sandbox-host/audit.jsonl"
[plugins.tunnel]
sandbox = "namespaces"
network = "outbound"
read = ["/etc/ssl/certs"]
[plugins.legacy]
sandbox = "off"
)",
                "config.toml");
  Config config = load_config(file.path());
  EXPECT_EQ(config.source, file.path().string());
  ASSERT_EQ(config.module_dirs.size(), 2u);
  EXPECT_EQ(config.module_dirs[0], "/opt/modules");
  EXPECT_EQ(config.backends_enabled, (std::vector<std::string>{"namespaces", "landlock", "off"}));
  EXPECT_EQ(config.backend_priority, (std::vector<std::string>{"landlock", "namespaces"}));
  EXPECT_EQ(config.ops_enabled, (std::vector<std::string>{"ping", "cap-slot"}));
  EXPECT_EQ(config.audit_format, AuditFormat::json);
  EXPECT_EQ(config.audit_path, "/var/log/sandbox-host/audit.jsonl");
  EXPECT_EQ(config.plugin("tunnel").sandbox, "namespaces");
  EXPECT_EQ(config.plugin("tunnel").network, Network::outbound);
  EXPECT_EQ(config.plugin("tunnel").read, std::vector<std::string>{"/etc/ssl/certs"});
  EXPECT_EQ(config.plugin("legacy").sandbox, "off");
  // A plugin the file does not name gets the probe's choice, never off.
  EXPECT_EQ(config.plugin("unnamed").sandbox, "auto");
}

TEST(Config, DefaultsEnableEveryBackendAndNeverPrioritiseOff) {
  Config config = default_config();
  EXPECT_TRUE(config.source.empty());
  EXPECT_EQ(config.backends_enabled,
            (std::vector<std::string>{"namespaces", "landlock", "seatbelt", "off"}));
  EXPECT_EQ(config.backend_priority,
            (std::vector<std::string>{"namespaces", "landlock", "seatbelt"}));
  // The build tree's module directory comes first: the suite runs from it.
  ASSERT_FALSE(config.module_dirs.empty());
  EXPECT_EQ(config.module_dirs.front(), std::filesystem::path(BUILD_MODULE_DIR).lexically_normal());
}

TEST(Config, UnknownKeysAreNamedWithTheirLineAndTheAllowedOnes) {
  EXPECT_EQ(error_of("module_dirs = []\nbackend = {}\n"),
            ":2: backend: unknown key; allowed: module_dirs, backends, ops, broker, egress, "
            "launcher, metrics, audit, limits, plugins");
  EXPECT_EQ(error_of("[backends]\nenabled = [\"off\"]\npriorty = []\n"),
            ":3: backends.priorty: unknown key; allowed: enabled, priority");
  EXPECT_EQ(error_of("[plugins.git]\nsandbox = \"auto\"\nnetwrok = \"none\"\n"),
            ":3: plugins.git.netwrok: unknown key; allowed: sandbox, network, read, env, "
            "handshake, limits");
}

TEST(Config, LimitsAreTheDefaultsWithTheFilesAndAPluginsOwnOverThem) {
  TempFile file(
      "[limits]\nprocesses = 64\ntmp_size = \"8M\"\nfile_size = \"unlimited\"\n"
      "memory = \"512M\"\ncpu = 1.5\ncgroup = \"/sandbox-host\"\nscratch_size = \"256M\"\n"
      "lifetime = \"2h\"\n"
      "[plugins.git.limits]\nprocesses = 16\nshm_size = 1048576\nmemory = \"unlimited\"\n"
      "cpu = 2\nscratch_files = 100\nlifetime = 90\n",
      "config.toml");
  const Config config = load_config(file.path());
  LaunchLimits expected;
  expected.process.processes = 64;
  expected.process.tmp_size = 8 << 20;
  expected.process.file_size = Limits::kUnlimited;
  expected.cgroup.memory = 512 << 20;
  expected.cgroup.cpu_millis = 1500;
  expected.watch.scratch_size = 256 << 20;
  expected.watch.lifetime_seconds = 2 * 3600;
  EXPECT_EQ(config.limits_for("other"), expected);
  EXPECT_EQ(config.cgroup, "/sandbox-host");
  expected.process.processes = 16;
  expected.process.shm_size = 1 << 20;
  expected.cgroup.memory = CgroupLimits::kUnlimited;
  expected.cgroup.cpu_millis = 2000;
  expected.watch.scratch_files = 100;
  expected.watch.lifetime_seconds = 90;
  EXPECT_EQ(config.limits_for("git"), expected);
}

TEST(Config, TheDefaultLimitsBoundMemoryAndCpuAndPlaceCgroupsOnTheirOwn) {
  const Config config;
  EXPECT_EQ(config.limits.cgroup.memory, std::uint64_t{2} << 30);
  EXPECT_EQ(config.cgroup, "auto");
  EXPECT_EQ(config.limits.watch.scratch_size, std::uint64_t{1} << 30);
  EXPECT_EQ(config.limits.watch.scratch_files, 65536u);
  EXPECT_EQ(config.limits.watch.lifetime_seconds, WatchLimits::kUnlimited);
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  EXPECT_EQ(config.limits.cgroup.cpu_millis,
            std::max<std::uint64_t>(1000, 500 * static_cast<std::uint64_t>(CPU_COUNT(&allowed))));
}

TEST(Config, ABadLimitIsNamedWithItsLineAndWhatIsAllowed) {
  const std::string bytes =
      "allowed: bytes as an integer or a string such as \"512M\" (K, M, G, T) of at least "
      "4096, or \"unlimited\"";
  EXPECT_EQ(error_of("[limits]\nprocesses = 0\n"),
            ":2: limits.processes: 0 is too small; allowed: an integer of at least 1, or "
            "\"unlimited\"");
  EXPECT_EQ(error_of("[limits]\nopen_files = -5\n"),
            ":2: limits.open_files: -5 is negative; allowed: an integer of at least 8, or "
            "\"unlimited\"");
  EXPECT_EQ(error_of("[limits]\nprocesses = \"64K\"\n"),
            ":2: limits.processes: \"64K\" is not an integer of at least 1, or \"unlimited\"");
  EXPECT_EQ(error_of("[limits]\ntmp_size = \"12X\"\n"),
            ":2: limits.tmp_size: \"12X\" is not " + bytes.substr(9));
  EXPECT_EQ(error_of("[limits]\ntmp_size = \"999999999999T\"\n"),
            ":2: limits.tmp_size: \"999999999999T\" is not " + bytes.substr(9));
  EXPECT_EQ(error_of("[limits]\nshm_size = 1.5\n"),
            ":2: limits.shm_size: must be " + bytes.substr(9) + ", not a float");
  EXPECT_EQ(error_of("[plugins.git.limits]\nmemroy = \"1G\"\n"),
            ":2: plugins.git.limits.memroy: unknown key; allowed: processes, open_files, "
            "file_size, tmp_size, tmp_inodes, shm_size, memory, cpu, scratch_size, "
            "scratch_files, lifetime");
  EXPECT_EQ(error_of("[limits]\nmemroy = \"1G\"\n"),
            ":2: limits.memroy: unknown key; allowed: processes, open_files, file_size, "
            "tmp_size, tmp_inodes, shm_size, memory, cpu, scratch_size, scratch_files, lifetime, "
            "cgroup");
  EXPECT_EQ(error_of("[limits]\nmemory = \"1M\"\n"),
            ":2: limits.memory: 1048576 is too small; allowed: bytes as an integer or a string "
            "such as \"512M\" (K, M, G, T) of at least 16777216, or \"unlimited\"");
  const std::string cpus = "a number of CPUs such as 1 or 1.5, of at least 0.01, or \"unlimited\"";
  EXPECT_EQ(error_of("[limits]\ncpu = 0.001\n"),
            ":2: limits.cpu: 0.001000 is out of range; allowed: " + cpus);
  EXPECT_EQ(error_of("[limits]\ncpu = \"half\"\n"), ":2: limits.cpu: \"half\" is not " + cpus);
  EXPECT_EQ(error_of("[limits]\ncpu = 0\n"), ":2: limits.cpu: 0 is too small; allowed: " + cpus);
  const std::string seconds =
      "seconds as an integer or a string such as \"90s\", \"15m\", \"2h\" or \"1d\" of at "
      "least 1 second, or \"unlimited\"";
  EXPECT_EQ(error_of("[limits]\nlifetime = \"10x\"\n"),
            ":2: limits.lifetime: \"10x\" is not " + seconds);
  EXPECT_EQ(error_of("[limits]\nlifetime = \"1.5h\"\n"),
            ":2: limits.lifetime: \"1.5h\" is not " + seconds);
  EXPECT_EQ(error_of("[limits]\nlifetime = 0\n"),
            ":2: limits.lifetime: 0 is too small; allowed: " + seconds);
  EXPECT_EQ(error_of("[limits]\nlifetime = 1.5\n"),
            ":2: limits.lifetime: must be " + seconds + ", not a float");
  EXPECT_EQ(error_of("[limits]\nscratch_files = 3\n"),
            ":2: limits.scratch_files: 3 is too small; allowed: an integer of at least 16, or "
            "\"unlimited\"");
  EXPECT_EQ(error_of("[limits]\nscratch_size = \"lots\"\n"),
            ":2: limits.scratch_size: \"lots\" is not " + bytes.substr(9));
  EXPECT_EQ(error_of("[limits]\ncgroup = \"sandbox\"\n"),
            ":2: limits.cgroup: \"sandbox\" is not \"auto\", \"off\" or a cgroup path such as "
            "\"/sandbox-host\" (as /proc/self/cgroup writes it)");
  EXPECT_EQ(error_of("[limits]\ncgroup = \"/a/../b\"\n"),
            ":2: limits.cgroup: \"/a/../b\" is not \"auto\", \"off\" or a cgroup path such as "
            "\"/sandbox-host\" (as /proc/self/cgroup writes it)");
  EXPECT_EQ(error_of("[plugins.git.limits]\ncgroup = \"off\"\n"),
            ":2: plugins.git.limits.cgroup: is where every launch's cgroup goes; set it in "
            "[limits], not for one plugin");
  EXPECT_EQ(error_of("limits = 3\n"), ":1: limits: must be a table, not an integer");
}

TEST(Config, WrongTypesAreNamed) {
  EXPECT_EQ(error_of("module_dirs = \"/opt/modules\"\n"),
            ":1: module_dirs: must be an array of strings (absolute paths), not a string");
  EXPECT_EQ(error_of("[backends]\nenabled = [\"off\", 3]\n"),
            ":2: backends.enabled[1]: must be a string (module names of a-z, 0-9 and -), not an "
            "integer");
  EXPECT_EQ(error_of("plugins = 1\n"), ":1: plugins: must be a table, not an integer");
  EXPECT_EQ(error_of("[audit]\nformat = \"xml\"\n"),
            ":2: audit.format: \"xml\" is not a format; allowed: \"text\", \"json\"");
  EXPECT_EQ(error_of("module_dirs = [\"modules\"]\n"),
            ":1: module_dirs: \"modules\" is not an absolute path");
  EXPECT_EQ(error_of("[plugins.x]\nnetwork = \"lan\"\n"),
            ":2: plugins.x.network: \"lan\" is not a network; allowed: \"none\", \"outbound\", "
            "\"proxied\"");
}

TEST(Config, OffMustBeWrittenExactly) {
  // Anything that merely looks like "no sandbox" is refused, not taken for off.
  EXPECT_EQ(error_of("[plugins.x]\nsandbox = false\n"),
            ":2: plugins.x.sandbox: must be a string (\"auto\", \"off\" or an enabled backend's "
            "name), not a boolean");
  EXPECT_EQ(error_of("[plugins.x]\nsandbox = \"Off\"\n"),
            ":2: plugins.x.sandbox: \"Off\" is not a sandbox mode; allowed: \"auto\", \"off\" or "
            "an enabled backend's name");
  EXPECT_EQ(error_of("[plugins.x]\nsandbox = \"\"\n"),
            ":2: plugins.x.sandbox: \"\" is not a sandbox mode; allowed: \"auto\", \"off\" or an "
            "enabled backend's name");
  EXPECT_EQ(error_of("[plugins.x]\nsandbox = \"none\"\n"),
            ":2: plugins.x.sandbox: \"none\" is not an enabled backend; allowed: \"auto\" or one "
            "of namespaces, landlock, seatbelt, off");
  // off disabled: even written, it is refused.
  EXPECT_EQ(error_of("[backends]\nenabled = [\"namespaces\"]\npriority = [\"namespaces\"]\n"
                     "[plugins.x]\nsandbox = \"off\"\n"),
            ":5: plugins.x.sandbox: \"off\" is not an enabled backend; allowed: \"auto\" or one "
            "of namespaces");
}

TEST(Config, PriorityNeverNamesOffAndOnlyEnabledBackends) {
  EXPECT_EQ(error_of("[backends]\npriority = [\"namespaces\", \"off\"]\n"),
            ":2: backends.priority: \"off\" is never chosen by priority; write sandbox = \"off\" "
            "in a [plugins.<name>] table to run that plugin unsandboxed");
  EXPECT_EQ(error_of("[backends]\nenabled = [\"landlock\"]\npriority = [\"namespaces\"]\n"),
            ":3: backends.priority: \"namespaces\" is not enabled; enabled backends: landlock");
}

TEST(Config, InvalidTomlNamesTheLine) {
  std::string error = error_of("[backends]\nenabled = [\"off\"\n");
  EXPECT_EQ(error, ":2: not valid TOML: Error while parsing array: encountered end-of-file");
}

TEST(Config, AnExplicitPathMustExist) {
  try {
    load_config_or_defaults(std::filesystem::path("/nonexistent/sandbox-host.toml"));
    FAIL() << "a missing explicit config loaded";
  } catch (const ConfigError &e) {
    EXPECT_STREQ(e.what(), "/nonexistent/sandbox-host.toml: no such config file");
  }
}

}  // namespace
}  // namespace sandbox_host

namespace sandbox_host {
namespace {

TEST(Config, UnwrittenPriorityKeepsOnlyEnabledBackends) {
  test::TempFile file("[backends]\nenabled = [\"landlock\", \"off\", \"namespaces\"]\n",
                      "config.toml");
  EXPECT_EQ(load_config(file.path()).backend_priority,
            (std::vector<std::string>{"namespaces", "landlock"}));
  test::TempFile only_off("[backends]\nenabled = [\"off\"]\n", "config.toml");
  EXPECT_TRUE(load_config(only_off.path()).backend_priority.empty());
}

TEST(Config, AnEmptyAuditPathIsRefused) {
  test::TempFile file("[audit]\npath = \"\"\n", "config.toml");
  try {
    load_config(file.path());
    FAIL() << "an empty audit path loaded";
  } catch (const ConfigError &e) {
    EXPECT_EQ(std::string(e.what()), file.path().string() +
                                         ":2: audit.path: \"\" is neither \"stderr\" nor an "
                                         "absolute path");
  }
}

TEST(Config, BrokerDefaults) {
  Config config = default_config();
  EXPECT_EQ(config.broker.state_dir, default_state_dir());
  if (geteuid() == 0) {
    EXPECT_EQ(config.broker.state_dir, "/var/lib/sandbox-host");
  }
  EXPECT_EQ(config.broker.tick, std::chrono::milliseconds(100));
  EXPECT_EQ(config.broker.max_request_bytes, 128u * 1024);
  EXPECT_EQ(config.broker.max_reply_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(config.broker.max_concurrent, 64u);
  EXPECT_EQ(config.broker.identity, BrokerIdentity::lock);
  EXPECT_TRUE(config.op_settings.empty());
  // A file without [broker] keeps every default.
  TempFile file("[ops]\nenabled = [\"ping\"]\n", "config.toml");
  Config loaded = load_config(file.path());
  EXPECT_EQ(loaded.broker.state_dir, default_state_dir());
  EXPECT_EQ(loaded.broker.tick, std::chrono::milliseconds(100));
  EXPECT_EQ(loaded.broker.identity, BrokerIdentity::lock);
  EXPECT_TRUE(loaded.op_settings.empty());
}

TEST(Config, DefaultStateDirFollowsUidXdgStateHomeAndHome) {
  // Root: the system's state directory, whatever the environment says.
  EXPECT_EQ(default_state_dir(0, "/xdg", "/root"), "/var/lib/sandbox-host");
  // Others: XDG_STATE_HOME when absolute, else HOME's .local/state, else /tmp.
  EXPECT_EQ(default_state_dir(1000, "/home/u/state", "/home/u"), "/home/u/state/sandbox-host");
  EXPECT_EQ(default_state_dir(1000, nullptr, "/home/u"), "/home/u/.local/state/sandbox-host");
  EXPECT_EQ(default_state_dir(1000, "state", "/home/u"), "/home/u/.local/state/sandbox-host");
  EXPECT_EQ(default_state_dir(1000, "", "/home/u"), "/home/u/.local/state/sandbox-host");
  EXPECT_EQ(default_state_dir(1000, nullptr, nullptr), "/tmp/sandbox-host-1000");
  EXPECT_EQ(default_state_dir(1000, "state", "home"), "/tmp/sandbox-host-1000");
  EXPECT_EQ(default_state_dir(1000, "", ""), "/tmp/sandbox-host-1000");
  // Without arguments: this process's effective uid and environment.
  EXPECT_EQ(default_state_dir(),
            default_state_dir(geteuid(), std::getenv("XDG_STATE_HOME"), std::getenv("HOME")));
}

TEST(Config, BrokerKeysLoad) {
  TempFile file(R"(
[broker]
state_dir = "/srv/sandbox-host"
tick_ms = 250
max_request_bytes = 1024
max_reply_bytes = 65536
max_concurrent = 8
identity = "scan"
)",
                "config.toml");
  Config config = load_config(file.path());
  EXPECT_EQ(config.broker.state_dir, "/srv/sandbox-host");
  EXPECT_EQ(config.broker.tick, std::chrono::milliseconds(250));
  EXPECT_EQ(config.broker.max_request_bytes, 1024u);
  EXPECT_EQ(config.broker.max_reply_bytes, 65536u);
  EXPECT_EQ(config.broker.max_concurrent, 8u);
  EXPECT_EQ(config.broker.identity, BrokerIdentity::scan);

  // Both ends of each range are allowed.
  TempFile low(
      "[broker]\ntick_ms = 10\nmax_request_bytes = 256\nmax_reply_bytes = 4096\n"
      "max_concurrent = 1\nidentity = \"lock\"\n",
      "config.toml");
  Config lows = load_config(low.path());
  EXPECT_EQ(lows.broker.tick, std::chrono::milliseconds(10));
  EXPECT_EQ(lows.broker.max_request_bytes, 256u);
  EXPECT_EQ(lows.broker.max_reply_bytes, 4096u);
  EXPECT_EQ(lows.broker.max_concurrent, 1u);
  EXPECT_EQ(lows.broker.identity, BrokerIdentity::lock);
  TempFile high(
      "[broker]\ntick_ms = 10000\nmax_request_bytes = 16777216\nmax_reply_bytes = 268435456\n"
      "max_concurrent = 4096\n",
      "config.toml");
  Config highs = load_config(high.path());
  EXPECT_EQ(highs.broker.tick, std::chrono::milliseconds(10000));
  EXPECT_EQ(highs.broker.max_request_bytes, 16777216u);
  EXPECT_EQ(highs.broker.max_reply_bytes, 268435456u);
  EXPECT_EQ(highs.broker.max_concurrent, 4096u);
}

TEST(Config, BrokerNumbersOutOfRangeNameTheRange) {
  EXPECT_EQ(error_of("[broker]\ntick_ms = 9\n"),
            ":2: broker.tick_ms: 9 is out of range; allowed: 10 to 10000");
  EXPECT_EQ(error_of("[broker]\ntick_ms = 10001\n"),
            ":2: broker.tick_ms: 10001 is out of range; allowed: 10 to 10000");
  EXPECT_EQ(error_of("[broker]\nmax_request_bytes = 255\n"),
            ":2: broker.max_request_bytes: 255 is out of range; allowed: 256 to 16777216");
  EXPECT_EQ(error_of("[broker]\nmax_request_bytes = 16777217\n"),
            ":2: broker.max_request_bytes: 16777217 is out of range; allowed: 256 to 16777216");
  EXPECT_EQ(error_of("[broker]\nmax_reply_bytes = 4095\n"),
            ":2: broker.max_reply_bytes: 4095 is out of range; allowed: 4096 to 268435456");
  EXPECT_EQ(error_of("[broker]\nmax_reply_bytes = 268435457\n"),
            ":2: broker.max_reply_bytes: 268435457 is out of range; allowed: 4096 to 268435456");
  EXPECT_EQ(error_of("[broker]\nmax_concurrent = 0\n"),
            ":2: broker.max_concurrent: 0 is out of range; allowed: 1 to 4096");
  EXPECT_EQ(error_of("[broker]\nmax_concurrent = 4097\n"),
            ":2: broker.max_concurrent: 4097 is out of range; allowed: 1 to 4096");
  EXPECT_EQ(error_of("[broker]\nmax_concurrent = -1\n"),
            ":2: broker.max_concurrent: -1 is out of range; allowed: 1 to 4096");
}

TEST(Config, BrokerWrongTypesAreNamed) {
  EXPECT_EQ(error_of("broker = 1\n"), ":1: broker: must be a table, not an integer");
  EXPECT_EQ(error_of("[broker]\ntick_ms = \"100\"\n"),
            ":2: broker.tick_ms: must be an integer (10 to 10000), not a string");
  EXPECT_EQ(error_of("[broker]\nmax_concurrent = 2.0\n"),
            ":2: broker.max_concurrent: must be an integer (1 to 4096), not a float");
  EXPECT_EQ(error_of("[broker]\nmax_request_bytes = true\n"),
            ":2: broker.max_request_bytes: must be an integer (256 to 16777216), not a boolean");
  EXPECT_EQ(error_of("[broker]\nmax_reply_bytes = [65536]\n"),
            ":2: broker.max_reply_bytes: must be an integer (4096 to 268435456), not an array");
  EXPECT_EQ(error_of("[broker]\nstate_dir = 1\n"),
            ":2: broker.state_dir: must be a string (an absolute path), not an integer");
  EXPECT_EQ(error_of("[broker]\nidentity = false\n"),
            ":2: broker.identity: must be a string (\"lock\" or \"scan\"), not a boolean");
}

TEST(Config, BrokerStateDirIdentityAndUnknownKeys) {
  EXPECT_EQ(error_of("[broker]\nstate_dir = \"var/lib/sandbox-host\"\n"),
            ":2: broker.state_dir: \"var/lib/sandbox-host\" is not an absolute path");
  EXPECT_EQ(error_of("[broker]\nstate_dir = \"\"\n"),
            ":2: broker.state_dir: \"\" is not an absolute path");
  EXPECT_EQ(error_of("[broker]\nidentity = \"pid\"\n"),
            ":2: broker.identity: \"pid\" is not an identity; allowed: \"lock\", \"scan\"");
  EXPECT_EQ(error_of("[broker]\nidentity = \"Lock\"\n"),
            ":2: broker.identity: \"Lock\" is not an identity; allowed: \"lock\", \"scan\"");
  EXPECT_EQ(error_of("[broker]\ntick_ms = 100\ntick = 100\n"),
            ":3: broker.tick: unknown key; allowed: state_dir, tick_ms, max_request_bytes, "
            "max_reply_bytes, max_concurrent, max_per_requester, max_queued, reply_timeout_ms, "
            "identity");
  EXPECT_EQ(error_of("[broker.spool]\ndir = \"/x\"\n"),
            ":1: broker.spool: unknown key; allowed: state_dir, tick_ms, max_request_bytes, "
            "max_reply_bytes, max_concurrent, max_per_requester, max_queued, reply_timeout_ms, "
            "identity");
}

}  // namespace
}  // namespace sandbox_host
