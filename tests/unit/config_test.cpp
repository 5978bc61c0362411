#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>

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
            ":2: backend: unknown key; allowed: module_dirs, backends, ops, broker, audit, "
            "plugins");
  EXPECT_EQ(error_of("[backends]\nenabled = [\"off\"]\npriorty = []\n"),
            ":3: backends.priorty: unknown key; allowed: enabled, priority");
  EXPECT_EQ(error_of("[plugins.git]\nsandbox = \"auto\"\nnetwrok = \"none\"\n"),
            ":3: plugins.git.netwrok: unknown key; allowed: sandbox, network, read");
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
  EXPECT_EQ(error_of("[plugins.x]\nnetwork = \"proxied\"\n"),
            ":2: plugins.x.network: \"proxied\" is not a network; allowed: \"none\", \"outbound\"");
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
            "max_reply_bytes, max_concurrent, identity");
  EXPECT_EQ(error_of("[broker.spool]\ndir = \"/x\"\n"),
            ":1: broker.spool: unknown key; allowed: state_dir, tick_ms, max_request_bytes, "
            "max_reply_bytes, max_concurrent, identity");
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
  EXPECT_EQ(error_of(head + "requester_env = [\n  \"HOME\",\n  \"MY-VAR\",\n]\n"),
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
  const OpSettings &secret = load_config(file.path()).op_settings.at("secret");
  EXPECT_TRUE(secret.requester_env.empty());
  EXPECT_TRUE(secret.entries.empty());
}

}  // namespace
}  // namespace sandbox_host
