#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/egress.hpp>

#include <gtest/gtest.h>

#include <sched.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <tuple>

namespace sandbox_host {
namespace {

using test::TempFile;

// The error a config file gets, or "" when it loads.
std::string error_of(const std::string &toml) {
  TempFile file(toml, "config.toml");
  try {
    load_config(file.path());
  } catch (const ConfigError &e) {
    // The file's path varies; everything after it is what the operator reads.
    std::string message = e.what();
    EXPECT_EQ(message.rfind(file.path().string(), 0), 0u) << message;
    return message.substr(file.path().string().size());
  }
  return "";
}

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

using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;
using Strings = std::vector<std::string>;

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

TEST(Config, OpTablesKeepTheFileOrderAsText) {
  // ops.enabled written after the table it allows.
  TempFile file(R"(
[ops.secret]
command = "/usr/local/bin/secrets"
args = ["get", 2, true]
requester_env = ["SOPS_AGE_KEY_FILE", "_x1"]
timeout = 0x1e
verbose = false
attempts = -3
empty = []
[ops]
enabled = ["ping", "secret"]
)",
                "config.toml");
  Config config = load_config(file.path());
  ASSERT_EQ(config.op_settings.size(), 1u);
  const OpSettings &secret = config.op_settings.at("secret");
  EXPECT_EQ(secret.requester_env, (Strings{"SOPS_AGE_KEY_FILE", "_x1"}));
  EXPECT_EQ(secret.entries, (Entries{{"command", {"/usr/local/bin/secrets"}},
                                     {"args", {"get", "2", "true"}},
                                     {"timeout", {"30"}},
                                     {"verbose", {"false"}},
                                     {"attempts", {"-3"}},
                                     {"empty", {}}}));
}

TEST(Config, OpTableEntriesFollowColumnsOnOneLine) {
  TempFile file("[ops]\nenabled = [\"secret\"]\nsecret = { zeta = 1, alpha = \"a\", mid = [] }\n",
                "config.toml");
  EXPECT_EQ(load_config(file.path()).op_settings.at("secret").entries,
            (Entries{{"zeta", {"1"}}, {"alpha", {"a"}}, {"mid", {}}}));
}

TEST(Config, OpTableOfTheDefaultPingNeedsNoEnabled) {
  TempFile file("[ops.ping]\nreply = \"pong\"\n", "config.toml");
  Config config = load_config(file.path());
  EXPECT_EQ(config.ops_enabled, Strings{"ping"});
  EXPECT_EQ(config.op_settings.at("ping").entries, (Entries{{"reply", {"pong"}}}));
  EXPECT_TRUE(config.op_settings.at("ping").requester_env.empty());
}

TEST(Config, OpTableMustBeEnabled) {
  // ops.enabled at its default ["ping"].
  EXPECT_EQ(error_of("[ops.secret]\ncommand = \"/bin/true\"\n"),
            ":1: ops.secret: not in ops.enabled; enable it there or remove the table");
  // ops.enabled written after the table, without it.
  EXPECT_EQ(error_of("[ops.secret]\ncommand = \"/bin/true\"\n[ops]\nenabled = [\"ping\"]\n"),
            ":1: ops.secret: not in ops.enabled; enable it there or remove the table");
  EXPECT_EQ(error_of("[ops]\nenabled = []\n\n[ops.ping]\n"),
            ":4: ops.ping: not in ops.enabled; enable it there or remove the table");
  // A table named only as the parent of another.
  EXPECT_EQ(error_of("[ops.vault.paths]\nroot = \"/\"\n"),
            ":1: ops.vault: not in ops.enabled; enable it there or remove the table");
  // The module-name rule applies to a table's name.
  EXPECT_EQ(error_of("[ops.Secret]\n"),
            ":1: ops.Secret: \"Secret\" is not a module name; allowed: module names of a-z, 0-9 "
            "and -");
  EXPECT_EQ(error_of("[ops.\"my op\"]\n"),
            ":1: ops.\"my op\": \"my op\" is not a module name; allowed: module names of a-z, "
            "0-9 and -");
}

TEST(Config, OpsAllowsOnlyEnabledAndTables) {
  EXPECT_EQ(error_of("[ops]\nenable = [\"ping\"]\n"),
            ":2: ops.enable: unknown key; allowed: enabled, [ops.<name>] tables of enabled "
            "operations");
  EXPECT_EQ(error_of("[ops]\nenabled = [\"secret\"]\nsecret = \"/bin/true\"\n"),
            ":3: ops.secret: must be a table, not a string");
}

TEST(Config, OpValuesAreStringsIntegersBooleansOrArraysOfThem) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "limits = { n = 1 }\n"),
            ":4: ops.secret.limits: must be a string, integer or boolean, or an array of them, "
            "not a table");
  EXPECT_EQ(error_of(head + "[ops.secret.limits]\nn = 1\n"),
            ":4: ops.secret.limits: must be a string, integer or boolean, or an array of them, "
            "not a table");
  EXPECT_EQ(error_of(head + "ratio = 0.5\n"),
            ":4: ops.secret.ratio: must be a string, integer or boolean, or an array of them, "
            "not a float");
  EXPECT_EQ(error_of(head + "since = 1979-05-27\n"),
            ":4: ops.secret.since: must be a string, integer or boolean, or an array of them, "
            "not a date or time");
  EXPECT_EQ(error_of(head + "args = [\n  \"get\",\n  \"x\",\n  { a = 1 },\n]\n"),
            ":7: ops.secret.args[2]: must be a string, integer or boolean, not a table");
  EXPECT_EQ(error_of(head + "args = [\"get\", [\"x\"]]\n"),
            ":4: ops.secret.args[1]: must be a string, integer or boolean, not an array");
  EXPECT_EQ(error_of(head + "args = [1.5]\n"),
            ":4: ops.secret.args[0]: must be a string, integer or boolean, not a float");
}

TEST(Config, OpKeysAreLowercaseNames) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "Command = \"/bin/true\"\n"),
            ":4: ops.secret.Command: \"Command\" is not a key of an operation; allowed: a-z, "
            "0-9, _ and -");
  EXPECT_EQ(error_of(head + "\"\" = 1\n"),
            ":4: ops.secret.\"\": \"\" is not a key of an operation; allowed: a-z, 0-9, _ and -");
  EXPECT_EQ(error_of(head + "\"a.b\" = 1\n"),
            ":4: ops.secret.\"a.b\": \"a.b\" is not a key of an operation; allowed: a-z, 0-9, _ "
            "and -");
  // The first bad key in the file is the one named.
  EXPECT_EQ(error_of(head + "ok = 1\nzz = 0.5\nBad = 1\n"),
            ":5: ops.secret.zz: must be a string, integer or boolean, or an array of them, not "
            "a float");
}

TEST(Config, RequesterEnvNamesVariables) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  EXPECT_EQ(error_of(head + "requester_env = \"HOME\"\n"),
            ":4: ops.secret.requester_env: must be an array of strings (environment variable "
            "names), not a string");
  EXPECT_EQ(error_of(head + "requester_env = [\"HOME\", 1]\n"),
            ":4: ops.secret.requester_env[1]: must be a string (environment variable names), not "
            "an integer");
  EXPECT_EQ(error_of(head + "requester_env = [\n  \"TERM\",\n  \"MY-VAR\",\n]\n"),
            ":6: ops.secret.requester_env[1]: \"MY-VAR\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"1PASSWORD\"]\n"),
            ":4: ops.secret.requester_env[0]: \"1PASSWORD\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"\"]\n"),
            ":4: ops.secret.requester_env[0]: \"\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  EXPECT_EQ(error_of(head + "requester_env = [\"A=B\"]\n"),
            ":4: ops.secret.requester_env[0]: \"A=B\" is not an environment variable name; "
            "allowed: A-Z, a-z, 0-9 and _, not starting with a digit");
  // Empty is allowed: the operation gets none of the requester's variables.
  TempFile file(head + "requester_env = []\n", "config.toml");
  const Config config = load_config(file.path());
  const OpSettings &secret = config.op_settings.at("secret");
  EXPECT_TRUE(secret.requester_env.empty());
  EXPECT_TRUE(secret.entries.empty());
}

TEST(Config, RequesterEnvRefusesVariablesThatChangeHowTheCommandRuns) {
  const std::string head = "[ops]\nenabled = [\"secret\"]\n[ops.secret]\n";
  const std::string data = "; name only variables that carry data to the command";
  const std::string loader = ": the dynamic loader reads it and can load code into the command";
  const std::string libc = ": the C library reads it to load modules or data, or to tune itself";
  const std::string broker = ": the broker sets it for the command itself";
  const std::string shell = ": a shell reads it to run code or to change how it parses a script";
  const std::string interpreter = ": an interpreter reads it to load code or take options";
  const std::string git = ": git reads it as configuration, and some run commands";
  const std::map<std::string, std::string> refused = {
      {"LD_PRELOAD", ", as every LD_* is" + loader},
      {"LD_LIBRARY_PATH", ", as every LD_* is" + loader},
      {"LD_AUDIT", ", as every LD_* is" + loader},
      {"DYLD_INSERT_LIBRARIES", ", as every DYLD_* is" + loader},
      {"GCONV_PATH", libc},
      {"LOCPATH", libc},
      {"NLSPATH", libc},
      {"MALLOC_ARENA_MAX", ", as every MALLOC_* is" + libc},
      {"GLIBC_TUNABLES", libc},
      {"PATH", broker},
      {"HOME", broker},
      {"LANG", broker},
      {"BASH_ENV", shell},
      {"ENV", shell},
      {"SHELLOPTS", shell},
      {"BASHOPTS", shell},
      {"PS4", shell},
      {"IFS", shell},
      {"CDPATH", shell},
      {"BASH_FUNC_ls", ", as every BASH_FUNC_* is" + shell},
      {"PYTHONPATH", interpreter},
      {"PYTHONSTARTUP", interpreter},
      {"PYTHONHOME", interpreter},
      {"PERL5LIB", interpreter},
      {"PERL5OPT", interpreter},
      {"PERLLIB", interpreter},
      {"RUBYOPT", interpreter},
      {"RUBYLIB", interpreter},
      {"NODE_OPTIONS", interpreter},
      {"NODE_PATH", interpreter},
      {"JAVA_TOOL_OPTIONS", interpreter},
      {"_JAVA_OPTIONS", interpreter},
      {"GIT_SSH_COMMAND", ", as every GIT_* is" + git},
      {"GIT_CONFIG_COUNT", ", as every GIT_* is" + git},
      {"GIT_DIR", ", as every GIT_* is" + git},
  };
  for (const auto &[name, why] : refused) {
    EXPECT_EQ(error_of(head + "requester_env = [\"" + name + "\"]\n"),
              ":4: ops.secret.requester_env[0]: \"" + name + "\" is refused" + why + data);
  }
  // Named by its index, at its own line, after names that are taken.
  EXPECT_EQ(error_of(head + "requester_env = [\n  \"SOPS_AGE_KEY_FILE\",\n  \"LD_PRELOAD\",\n]\n"),
            ":6: ops.secret.requester_env[1]: \"LD_PRELOAD\" is refused, as every LD_* is" +
                loader + data);

  // Data variables are taken, those that only share a start with a refused one too.
  TempFile file(head +
                    "requester_env = [\"SOPS_AGE_KEY_FILE\", \"ALL_PROXY\", \"all_proxy\", "
                    "\"LDAP_URI\", \"GITHUB_TOKEN\", \"ENVIRONMENT\", \"PATH_INFO\"]\n",
                "config.toml");
  const Config config = load_config(file.path());
  EXPECT_EQ(config.op_settings.at("secret").requester_env,
            (std::vector<std::string>{"SOPS_AGE_KEY_FILE", "ALL_PROXY", "all_proxy", "LDAP_URI",
                                      "GITHUB_TOKEN", "ENVIRONMENT", "PATH_INFO"}));
}

// ---- [egress] ----------------------------------------------------------------------------

using std::chrono::seconds;

const std::string kEgressKeys =
    "implementation, listen, socket, allow, allow_addresses, inject, resolve, token_command, "
    "renew_every_s, "
    "renew_bound_s, renew_cold_bound_s, renew_backoff_s, upstream_ca_bundle, runtime_dir, "
    "same_user, log_connections, connect_timeout_s, head_timeout_s, idle_timeout_s, "
    "max_tunnels, ca_validity_days, leaf_validity_hours, parent";

TEST(EgressConfig, AbsentUnlessTheFileHasTheTable) {
  EXPECT_FALSE(default_config().egress.has_value());
  TempFile file("[broker]\ntick_ms = 100\n", "config.toml");
  EXPECT_FALSE(load_config(file.path()).egress.has_value());
}

TEST(EgressConfig, AnEmptyTableHasEveryDefault) {
  // broker.state_dir written after [egress]: the socket's default follows it all the same.
  TempFile file("[egress]\n[broker]\nstate_dir = \"/srv/sh\"\n", "config.toml");
  const Config config = load_config(file.path());
  ASSERT_TRUE(config.egress.has_value());
  const EgressConfig &egress = *config.egress;
  ASSERT_TRUE(egress.listen.has_value());
  EXPECT_EQ(egress.listen->address.to_string(), "127.0.0.1");
  EXPECT_EQ(egress.listen->port, 3128);
  EXPECT_EQ(egress.socket, "/srv/sh/egress.sock");
  EXPECT_TRUE(egress.allow.empty());
  EXPECT_TRUE(egress.allow_addresses.empty());
  EXPECT_TRUE(egress.inject.empty());
  EXPECT_TRUE(egress.resolve.empty());
  EXPECT_TRUE(egress.token_command.empty());
  EXPECT_EQ(egress.renew_every, seconds(300));
  EXPECT_EQ(egress.renew_bound, seconds(30));
  EXPECT_EQ(egress.renew_cold_bound, seconds(120));
  EXPECT_EQ(egress.renew_backoff, (std::vector<seconds>{seconds(5), seconds(15), seconds(60)}));
  EXPECT_TRUE(egress.upstream_ca_bundle.empty());
  EXPECT_TRUE(egress.runtime_dir.empty());
  EXPECT_TRUE(egress.same_user);
  EXPECT_FALSE(egress.log_connections);
  EXPECT_EQ(egress.connect_timeout, seconds(10));
  EXPECT_EQ(egress.head_timeout, seconds(10));
  EXPECT_EQ(egress.idle_timeout, seconds(300));
  EXPECT_EQ(egress.max_tunnels, 20000u);
  EXPECT_EQ(egress.ca_validity, std::chrono::days(30));
  EXPECT_EQ(egress.leaf_validity, std::chrono::hours(24));

  // Without broker.state_dir: under the default state directory.
  TempFile plain("[egress]\n", "config.toml");
  EXPECT_EQ(load_config(plain.path()).egress->socket, default_state_dir() / "egress.sock");
}

TEST(EgressConfig, EveryKeyLoads) {
  TempFile file(R"(
[egress]
listen = "[::1]:0"
socket = "/run/sh/egress.sock"
allow = ["github.com", "*.githubusercontent.com", "example.test:8443"]
allow_addresses = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]
inject = ["github.com", "Objects.GitHubUserContent.com."]
resolve = { "example.test" = ["127.0.0.1", "::1"], "git.test" = ["127.0.0.2"] }
token_command = ["/usr/local/bin/devctl", "token", "--raw"]
renew_every_s = 600
renew_bound_s = 20
renew_cold_bound_s = 90
renew_backoff_s = [1, 2]
upstream_ca_bundle = "/etc/test/ca.pem"
runtime_dir = "/run/user/1000"
same_user = false
log_connections = true
connect_timeout_s = 5
head_timeout_s = 7
idle_timeout_s = 60
max_tunnels = 10
ca_validity_days = 2
leaf_validity_hours = 48
)",
                "config.toml");
  const EgressConfig egress = *load_config(file.path()).egress;
  ASSERT_TRUE(egress.listen.has_value());
  EXPECT_EQ(egress.listen->address.to_string(), "::1");
  EXPECT_EQ(egress.listen->port, 0);
  EXPECT_EQ(egress.socket, "/run/sh/egress.sock");
  EXPECT_EQ(egress.allow, (Strings{"github.com", "*.githubusercontent.com", "example.test:8443"}));
  EXPECT_EQ(egress.allow_addresses, (Strings{"127.0.0.1", "10.0.0.0/8", "fd00::/8"}));
  EXPECT_EQ(egress.inject, (Strings{"github.com", "Objects.GitHubUserContent.com."}));
  EXPECT_EQ(egress.resolve, (std::map<std::string, Strings>{{"example.test", {"127.0.0.1", "::1"}},
                                                            {"git.test", {"127.0.0.2"}}}));
  EXPECT_EQ(egress.token_command, (Strings{"/usr/local/bin/devctl", "token", "--raw"}));
  EXPECT_EQ(egress.renew_every, seconds(600));
  EXPECT_EQ(egress.renew_bound, seconds(20));
  EXPECT_EQ(egress.renew_cold_bound, seconds(90));
  EXPECT_EQ(egress.renew_backoff, (std::vector<seconds>{seconds(1), seconds(2)}));
  EXPECT_EQ(egress.upstream_ca_bundle, "/etc/test/ca.pem");
  EXPECT_EQ(egress.runtime_dir, "/run/user/1000");
  EXPECT_FALSE(egress.same_user);
  EXPECT_TRUE(egress.log_connections);
  EXPECT_EQ(egress.connect_timeout, seconds(5));
  EXPECT_EQ(egress.head_timeout, seconds(7));
  EXPECT_EQ(egress.idle_timeout, seconds(60));
  EXPECT_EQ(egress.max_tunnels, 10u);
  EXPECT_EQ(egress.ca_validity, std::chrono::days(2));
  EXPECT_EQ(egress.leaf_validity, std::chrono::hours(48));

  // "" turns the TCP listener off; an empty backoff retries at the next renewal.
  TempFile off("[egress]\nlisten = \"\"\nrenew_backoff_s = []\n", "config.toml");
  const EgressConfig quiet = *load_config(off.path()).egress;
  EXPECT_FALSE(quiet.listen.has_value());
  EXPECT_TRUE(quiet.renew_backoff.empty());
}

TEST(EgressConfig, UnknownKeysAndWrongTypesAreNamed) {
  EXPECT_EQ(error_of("egress = 1\n"), ":1: egress: must be a table, not an integer");
  EXPECT_EQ(error_of("[egress]\nallow = []\nlisten_on = \"127.0.0.1:1\"\n"),
            ":3: egress.listen_on: unknown key; allowed: " + kEgressKeys);
  EXPECT_EQ(error_of("[egress]\nlisten = 3128\n"),
            ":2: egress.listen: must be a string (\"<loopback address>:<port>\", or \"\" for "
            "none), not an integer");
  EXPECT_EQ(error_of("[egress]\nallow = \"github.com\"\n"),
            ":2: egress.allow: must be an array of strings (host names or *.domain patterns), "
            "not a string");
  EXPECT_EQ(error_of("[egress]\nresolve = [\"127.0.0.1\"]\n"),
            ":2: egress.resolve: must be a table, not an array");
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = \"5\"\n"),
            ":2: egress.renew_backoff_s: must be an array of integers (1 to 86400), not a string");
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = [5, \"15\"]\n"),
            ":2: egress.renew_backoff_s[1]: must be an integer (1 to 86400), not a string");
  EXPECT_EQ(error_of("[egress]\nsame_user = \"yes\"\n"),
            ":2: egress.same_user: must be a boolean, not a string");
  EXPECT_EQ(error_of("[egress]\nlog_connections = 1\n"),
            ":2: egress.log_connections: must be a boolean, not an integer");
  EXPECT_EQ(error_of("[egress]\nmax_tunnels = 1.5\n"),
            ":2: egress.max_tunnels: must be an integer (1 to 1000000), not a float");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"/bin/gh\", 1]\n"),
            ":2: egress.token_command[1]: must be a string (an absolute path and its arguments), "
            "not an integer");
}

TEST(EgressConfig, ListenMustBeALoopbackAddressAndPort) {
  const std::string allowed =
      " is not a loopback address and port; allowed: \"127.0.0.1:3128\" (any address of "
      "127.0.0.0/8), \"[::1]:3128\", port 0 for any, or \"\" for none";
  for (const std::string bad :
       {"0.0.0.0:3128", "10.0.0.1:3128", "localhost:3128", "127.0.0.1", "127.0.0.1:", ":3128",
        "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:0x50", "127.1:3128", "::1:3128", "[::2]:3128",
        "[127.0.0.1]:3128", "128.0.0.1:3128"}) {
    EXPECT_EQ(error_of("[egress]\nlisten = \"" + bad + "\"\n"),
              ":2: egress.listen: \"" + bad + "\"" + allowed)
        << bad;
  }
  TempFile other("[egress]\nlisten = \"127.8.9.10:65535\"\n", "config.toml");
  const auto listen = load_config(other.path()).egress->listen;
  ASSERT_TRUE(listen.has_value());
  EXPECT_EQ(listen->address.to_string(), "127.8.9.10");
  EXPECT_EQ(listen->port, 65535);
}

TEST(EgressConfig, PathsMustBeAbsoluteAndTheSocketFitAnAddress) {
  EXPECT_EQ(error_of("[egress]\nsocket = \"egress.sock\"\n"),
            ":2: egress.socket: \"egress.sock\" is not an absolute path");
  EXPECT_EQ(error_of("[egress]\nsocket = \"\"\n"),
            ":2: egress.socket: \"\" is not an absolute path");
  const std::string long_path = "/" + std::string(107, 's');
  EXPECT_EQ(error_of("[egress]\nsocket = \"" + long_path + "\"\n"),
            ":2: egress.socket: \"" + long_path +
                "\" is longer than a unix socket address holds (107 bytes)");
  TempFile fits("[egress]\nsocket = \"/" + std::string(106, 's') + "\"\n", "config.toml");
  EXPECT_EQ(load_config(fits.path()).egress->socket.string().size(), 107u);
  // The default socket follows broker.state_dir, which may be too long for it.
  const std::string state_dir = "/" + std::string(100, 'd');
  EXPECT_EQ(error_of("[broker]\nstate_dir = \"" + state_dir + "\"\n\n[egress]\nallow = []\n"),
            ":4: egress.socket: the default \"" + state_dir +
                "/egress.sock\" (under broker.state_dir) is longer than a unix socket address "
                "holds (107 bytes); set egress.socket");
  EXPECT_EQ(error_of("[egress]\nupstream_ca_bundle = \"ca.pem\"\n"),
            ":2: egress.upstream_ca_bundle: \"ca.pem\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for the system's roots");
  EXPECT_EQ(error_of("[egress]\nruntime_dir = \"run/user/0\"\n"),
            ":2: egress.runtime_dir: \"run/user/0\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for $XDG_RUNTIME_DIR");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"devctl\", \"token\"]\n"),
            ":2: egress.token_command[0]: \"devctl\" is not an absolute path");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"\"]\n"),
            ":2: egress.token_command[0]: \"\" is not an absolute path");
}

TEST(EgressConfig, HostsAddressesAndResolveEntriesAreChecked) {
  EXPECT_EQ(error_of("[egress]\nallow = [\n  \"github.com\",\n  \"\",\n]\n"),
            ":4: egress.allow[1]: is empty; allowed: host names or *.domain patterns");
  // The proxy's own parsers read each entry, and the error names it at its line.
  const std::vector<std::pair<std::string, std::string>> bad_blocks{
      {"10.0.0.0/33", "prefix length \"33\" is not a number from 0 to 32"},
      {"::1/129", "prefix length \"129\" is not a number from 0 to 128"},
      {"github.com", "\"github.com\" is not an IP address"},
      {"10.0.0.0/", "prefix length \"\" is not a number from 0 to 32"},
      {"127.0.0.1/-1", "prefix length \"-1\" is not a number from 0 to 32"},
      {"", "is empty"},
      {"fe80::1%eth0/64", "a zone id has no place in an address block"},
      // Accepted by the config's own check once, refused by the proxy at start-up.
      {"10.0.0.1/8", "has bits set past the prefix length; the block is 10.0.0.0/8"},
  };
  for (const auto &[bad, problem] : bad_blocks) {
    EXPECT_EQ(error_of("[egress]\nallow_addresses = [\n  \"127.0.0.1\",\n  \"" + bad + "\",\n]\n"),
              ":4: egress.allow_addresses[1]: \"" + bad + "\": " + problem)
        << bad;
  }
  const std::vector<std::pair<std::string, std::string>> bad_hosts{
      {"*", "\"*\" alone would allow every host; list them"},
      {"https://github.com", "is a URL; an entry is a host name or an IP address, with :ports"},
      {"foo.*.com",
       "a \"*\" stands only for the subdomains of a name, as the first label of "
       "\"*.example.com\""},
      {"*.127.0.0.1", "a \"*.\" entry covers the subdomains of a name, not an IP address"},
  };
  for (const auto &[bad, problem] : bad_hosts) {
    EXPECT_EQ(error_of("[egress]\nallow = [\"github.com\", \"" + bad + "\"]\n"),
              ":2: egress.allow[1]: \"" + bad + "\": " + problem)
        << bad;
  }
  EXPECT_TRUE(error_of("[egress]\nallow = [\"github.com:0\"]\n")
                  .starts_with(":2: egress.allow[0]: \"github.com:0\": "));
  const std::string long_label = std::string(64, 'a') + ".com";
  EXPECT_TRUE(error_of("[egress]\nallow = [\"" + long_label + "\"]\n")
                  .starts_with(":2: egress.allow[0]: \"" + long_label + "\": "));
  // What the proxy takes, the config takes: an IPv4 shorthand, an IDN name, a bracketed IPv6
  // literal with ports.
  TempFile taken(
      "[egress]\nallow_addresses = [\"10.0.0/8\"]\n"
      "allow = [\"b\u00fccher.example\", \"[::1]:8443\"]\n",
      "config.toml");
  EXPECT_EQ(load_config(taken.path()).egress->allow.size(), 2u);
  EXPECT_EQ(error_of("[egress]\nresolve = { \"example.test\" = [\"localhost\"] }\n"),
            ":2: egress.resolve.\"example.test\"[0]: \"localhost\" is not an IP address (like "
            "\"127.0.0.1\" or \"::1\")");
  EXPECT_EQ(error_of("[egress]\nresolve = { \"example.test\" = [] }\n"),
            ":2: egress.resolve.\"example.test\": names no address; allowed: one or more IP "
            "addresses");
  EXPECT_EQ(error_of("[egress]\nresolve = { \"\" = [\"127.0.0.1\"] }\n"),
            ":2: egress.resolve.\"\": is not a host name");
  EXPECT_EQ(
      error_of(
          "[egress]\nresolve = { \"Example.Test.\" = [\"::1\"], \"example.test\" = [\"::1\"] }\n"),
      ":2: egress.resolve.\"example.test\": names example.test, which an earlier key of "
      "egress.resolve names too");
  EXPECT_TRUE(error_of("[egress]\nresolve = { \"bad..name\" = [\"::1\"] }\n")
                  .starts_with(":2: egress.resolve.\"bad..name\": host name \"bad..name\" "));
  EXPECT_EQ(error_of("[egress.resolve]\n\"example.test\" = \"127.0.0.1\"\n"),
            ":2: egress.resolve.\"example.test\": must be an array of strings (IP addresses), not "
            "a string");
}

TEST(EgressConfig, InjectHostsAreNamedAndAllowed) {
  EXPECT_EQ(
      error_of("[egress]\nallow = [\"*.github.com\"]\ninject = [\"*.github.com\"]\n"),
      ":3: egress.inject[0]: \"*.github.com\" is a pattern; the token goes to named hosts only");
  EXPECT_EQ(error_of("[egress]\nallow = [\"github.com\"]\ninject = [\"api.github.com\"]\n"),
            ":3: egress.inject[0]: \"api.github.com\" is not allowed on port 443 by egress.allow "
            "(no entry for api.github.com); a host that gets the token must also be allowed");
  // *.domain allows subdomains only, never the apex.
  EXPECT_EQ(error_of("[egress]\nallow = [\"*.github.com\"]\ninject = [\"github.com\"]\n"),
            ":3: egress.inject[0]: \"github.com\" is not allowed on port 443 by egress.allow (no "
            "entry for github.com); a host that gets the token must also be allowed");
  // inject written before allow: checked once both are known.
  EXPECT_EQ(error_of("[egress]\ninject = [\"github.com\"]\n"),
            ":2: egress.inject[0]: \"github.com\" is not allowed on port 443 by egress.allow (no "
            "entry for github.com (the allow list is empty)); a host that gets the token must "
            "also be allowed");
  // The token goes to port 443, so an entry for another port does not let it through.
  EXPECT_EQ(error_of("[egress]\nallow = [\"x.test\", \"github.com:8443\"]\n"
                     "inject = [\n  \"x.test\",\n  \"github.com\",\n]\n"),
            ":5: egress.inject[1]: \"github.com\" is not allowed on port 443 by egress.allow (port "
            "443 is not allowed for github.com (entry github.com:8443 allows 8443)); a host that "
            "gets the token must also be allowed");
  EXPECT_EQ(error_of("[egress]\ninject = [\"\"]\nallow = []\n"),
            ":2: egress.inject[0]: is empty; allowed: host names");
  // Names compare case-insensitively and without a trailing dot; a port on the entry is
  // the proxy's business.
  TempFile file(
      "[egress]\ninject = [\"API.GitHub.com.\", \"github.com\", \"codeload.github.com\"]\n"
      "allow = [\"*.github.com\", \"GitHub.com:443\"]\n",
      "config.toml");
  EXPECT_EQ(load_config(file.path()).egress->inject.size(), 3u);
}

TEST(EgressConfig, TheParentProxyIsAnHttpUrlWithAPortAndOneCredentialSource) {
  TempFile file(
      "[egress.parent]\nurl = \"http://Proxy.Corp.Example:3128/\"\n"
      "credential_file = \"/etc/sandbox-host/parent.credential\"\n",
      "config.toml");
  const auto parent = load_config(file.path()).egress->parent;
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->host, "proxy.corp.example");
  EXPECT_EQ(parent->port, 3128);
  EXPECT_EQ(parent->credential_file, "/etc/sandbox-host/parent.credential");
  TempFile v6(
      "[egress.parent]\nurl = \"http://[fd00::1]:8080\"\n"
      "credential_command = [\"/usr/bin/proxy-credential\", \"--user\"]\n",
      "config.toml");
  const auto literal = *load_config(v6.path()).egress->parent;
  EXPECT_EQ(literal.host, "fd00::1");
  EXPECT_EQ(literal.port, 8080);
  EXPECT_EQ(literal.credential_command.size(), 2u);

  const std::string prefix = ":2: egress.parent.url: \"";
  const std::vector<std::pair<std::string, std::string>> bad_urls{
      {"https://proxy:3128", "\" is https; the parent is spoken to in plain HTTP"},
      {"socks5://proxy:1080", "\" is not an http:// URL"},
      {"http://user:pw@proxy:3128",
       "\" holds credentials, which would show wherever the config "
       "is shown"},
      {"http://proxy", "\" names no port"},
      {"http://proxy:0", "\" has port \"0\"; allowed: 1 to 65535"},
      {"http://proxy:70000", "\" has port \"70000\"; allowed: 1 to 65535"},
      {"http://proxy:3128/path", "\" has a path, query or fragment"},
      {"http://[fd00::1:3128", "\" has a \"[\" without \"]\""},
      {"http://[proxy]:3128", "\" has no IPv6 address between \"[\" and \"]\""},
      {"http://bad..name:3128", "\" has no host the proxy can dial: host name \"bad..name\""},
  };
  for (const auto &[url, problem] : bad_urls) {
    const std::string error = error_of("[egress.parent]\nurl = \"" + url + "\"\n");
    EXPECT_TRUE(error.starts_with(prefix + url + problem)) << url << ": " << error;
  }
  EXPECT_EQ(error_of("[egress.parent]\ncredential_file = \"/c\"\n"),
            ":1: egress.parent.url: is missing; the parent proxy is \"http://<host>:<port>\"");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_file = \"/c\"\n"
                     "credential_command = [\"/bin/c\"]\n"),
            ":4: egress.parent.credential_command: and egress.parent.credential_file are both "
            "set; the credential comes from one");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_command = [\"c\"]\n"),
            ":3: egress.parent.credential_command[0]: \"c\" is not an absolute path");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_file = \"c\"\n"),
            ":3: egress.parent.credential_file: \"c\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for none");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\nuser = \"u\"\n"),
            ":3: egress.parent.user: unknown key; allowed: url, credential_file, "
            "credential_command");
  EXPECT_EQ(error_of("[egress]\nparent = \"http://p:1\"\n"),
            ":2: egress.parent: must be a table, not a string");
}

TEST(EgressConfig, NumbersOutOfRangeNameTheRange) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"renew_every_s", "9", "10 to 86400"},      {"renew_every_s", "86401", "10 to 86400"},
      {"renew_bound_s", "0", "1 to 3600"},        {"renew_cold_bound_s", "3601", "1 to 3600"},
      {"connect_timeout_s", "0", "1 to 600"},     {"head_timeout_s", "601", "1 to 600"},
      {"idle_timeout_s", "86401", "1 to 86400"},  {"max_tunnels", "0", "1 to 1000000"},
      {"max_tunnels", "1000001", "1 to 1000000"}, {"ca_validity_days", "0", "1 to 3650"},
      {"ca_validity_days", "3651", "1 to 3650"},  {"leaf_validity_hours", "8761", "1 to 8760"},
      {"leaf_validity_hours", "-1", "1 to 8760"},
  };
  for (const auto &[key, value, range] : cases) {
    EXPECT_EQ(error_of("[egress]\n" + key + " = " + value + "\n"),
              ":2: egress." + key + ": " + value + " is out of range; allowed: " + range);
  }
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = [5, 0]\n"),
            ":2: egress.renew_backoff_s[1]: 0 is out of range; allowed: 1 to 86400");
}

TEST(EgressConfig, ALeafNeverOutlivesItsCa) {
  EXPECT_EQ(error_of("[egress]\nleaf_validity_hours = 25\nca_validity_days = 1\n"),
            ":2: egress.leaf_validity_hours: 25 hours is longer than the CA's validity "
            "(egress.ca_validity_days = 1, 24 hours); a leaf must not outlive its CA");
  TempFile file("[egress]\nleaf_validity_hours = 24\nca_validity_days = 1\n", "config.toml");
  EXPECT_EQ(load_config(file.path()).egress->leaf_validity, std::chrono::hours(24));
}

TEST(EgressConfig, AProxiedPluginNeedsTheTable) {
  EXPECT_EQ(error_of("[plugins.git]\nnetwork = \"proxied\"\n"),
            ":2: plugins.git.network: \"proxied\" goes through the egress proxy, and the file has "
            "no [egress] table to configure it");
  TempFile file("[plugins.git]\nnetwork = \"proxied\"\n[egress]\n", "config.toml");
  EXPECT_EQ(load_config(file.path()).plugin("git").network, Network::proxied);
}

TEST(EgressConfig, TheSandboxPortIsListensElse3128) {
  EgressConfig egress;
  EXPECT_EQ(egress.sandbox_port(), 3128);
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:8080");
  EXPECT_EQ(egress.sandbox_port(), 8080);
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:0");  // any port on the host's side
  EXPECT_EQ(egress.sandbox_port(), 3128);
  egress.listen.reset();
  EXPECT_EQ(egress.sandbox_port(), 3128);
}

TEST(EgressConfig, TheEgressDirIsUnderTheRuntimeDir) {
  EgressConfig egress;
  EXPECT_EQ(egress_dir(egress, "/run/user/1000"), "/run/user/1000/clawpatrol-sandbox/egress");
  EXPECT_EQ(egress_dir(egress, nullptr), "");
  EXPECT_EQ(egress_dir(egress, "run/user/1000"), "");
  EXPECT_EQ(egress_dir(egress, ""), "");
  egress.runtime_dir = "/srv/runtime";
  EXPECT_EQ(egress_dir(egress, "/run/user/1000"), "/srv/runtime/clawpatrol-sandbox/egress");
  EXPECT_EQ(egress_dir(egress, nullptr), "/srv/runtime/clawpatrol-sandbox/egress");
  test::ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/42");
  EXPECT_EQ(egress_dir(EgressConfig{}), "/run/user/42/clawpatrol-sandbox/egress");
}

TEST(EgressConfig, TheImplementationIsTheBuiltInProxyUnlessAModuleIsNamed) {
  TempFile builtin("[egress]\nimplementation = \"proxy\"\nallow = [\"github.com\"]\n",
                   "config.toml");
  const Config proxy = load_config(builtin.path());
  ASSERT_TRUE(proxy.egress);
  EXPECT_TRUE(proxy.egress->builtin());
  EXPECT_EQ(proxy.egress->allow, std::vector<std::string>{"github.com"});
  EXPECT_TRUE(proxy.egress->module_settings.empty());

  TempFile module(
      "[egress]\nimplementation = \"connect\"\n\n[egress.connect]\n"
      "socket = \"/run/connect.sock\"\nallow = [\"a.test:443\", \"b.test:80\"]\nport = 8080\n",
      "config.toml");
  const Config connect = load_config(module.path());
  ASSERT_TRUE(connect.egress);
  EXPECT_FALSE(connect.egress->builtin());
  EXPECT_EQ(connect.egress->implementation, "connect");
  const std::vector<std::pair<std::string, std::vector<std::string>>> settings{
      {"socket", {"/run/connect.sock"}},
      {"allow", {"a.test:443", "b.test:80"}},
      {"port", {"8080"}}};
  EXPECT_EQ(connect.egress->module_settings, settings);
  // The built-in's socket default is not made up for a module, which chooses its own.
  EXPECT_TRUE(connect.egress->socket.empty());
}

TEST(EgressConfig, AModuleTakesNoKeyOfTheBuiltInProxy) {
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\nallow = [\"github.com\"]\n"),
            ":3: egress.allow: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  // Whatever their order in the file.
  EXPECT_EQ(error_of("[egress]\nlisten = \"\"\nimplementation = \"connect\"\n"),
            ":2: egress.listen: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\n[egress.other]\nx = 1\n"),
            ":3: egress.other: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\n[egress.connect]\n"
                     "requester_env = [\"HOME\"]\n"),
            ":4: egress.connect.requester_env: is a key of an operation's table; this module has "
            "no requester whose variables it could take");
  EXPECT_EQ(
      error_of("[egress]\nimplementation = \"connect\"\n[egress.connect]\nAllow = 1\n"),
      ":4: egress.connect.Allow: \"Allow\" is not a key of an operation; allowed: a-z, 0-9, _ "
      "and -");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\nconnect = 1\n"),
            ":3: egress.connect: must be a table, not an integer");
}

TEST(EgressConfig, TheImplementationIsAModuleName) {
  EXPECT_EQ(error_of("[egress]\nimplementation = \"../evil\"\n"),
            ":2: egress.implementation: \"../evil\" is not a module name; allowed: \"proxy\" "
            "(the built-in proxy) or an egress module's name (a-z, 0-9 and -)");
  EXPECT_EQ(error_of("[egress]\nimplementation = 1\n"),
            ":2: egress.implementation: must be a string (\"proxy\" (the built-in proxy) or an "
            "egress module's name), not an integer");
  // With the built-in proxy, a table named like a module is an unknown key.
  EXPECT_EQ(error_of("[egress]\n[egress.connect]\nsocket = \"/x\"\n"),
            ":2: egress.connect: unknown key; allowed: " + kEgressKeys);
}

TEST(EgressConfig, TheBuiltInProxysRouteFillsTheSpec) {
  // The socket's directory reached through a symlink: the Spec holds where it really is.
  TempFile place("", "unused");
  std::filesystem::create_directory(place.dir() / "real");
  std::filesystem::create_directory_symlink(place.dir() / "real", place.dir() / "link");
  EgressConfig egress;
  egress.socket = place.dir() / "link/egress.sock";
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:8888");
  egress.runtime_dir = place.dir() / "link";
  Registry registry({});
  AuditSink audit;
  Spec spec;
  spec.network = Network::proxied;
  route_spec(spec, make_egress(egress, registry, audit)->route());
  EXPECT_EQ(spec.proxy_socket, (place.dir() / "real/egress.sock").string());
  EXPECT_EQ(spec.proxy_port, 8888);
  EXPECT_EQ(spec.egress_dir, (place.dir() / "real/clawpatrol-sandbox/egress").string());

  // No runtime directory: no egress directory.
  egress.runtime_dir.clear();
  test::ScopedEnv runtime("XDG_RUNTIME_DIR", std::nullopt);
  route_spec(spec, make_egress(egress, registry, audit)->route());
  EXPECT_EQ(spec.egress_dir, "");
}

}  // namespace
}  // namespace sandbox_host
