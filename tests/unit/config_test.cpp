#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

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
            ":2: backend: unknown key; allowed: module_dirs, backends, ops, audit, plugins");
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

}  // namespace
}  // namespace sandbox_host
