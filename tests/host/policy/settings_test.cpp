// The policy as Claude Code managed settings: the drop-in read back field by field with Poco
// (another JSON implementation than the one that wrote it), every key checked against the
// published settings schema, rendered the same way every time, and installed atomically
// into a managed-settings.d that nobody else may write.
#include "agent_tree.hpp"
#include "process.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/claude_settings.hpp>
#include <sandbox_host/host/policy/permission_rules.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace sandbox_host::agent_hook_test {
namespace {
namespace fs = std::filesystem;
namespace policy = sandbox_host::policy;
using Poco::JSON::Array;
using Poco::JSON::Object;

// Every key the drop-in may hold, as a path of object keys, each checked against the
// settings schema of SchemaStore/schemastore src/schemas/json/claude-code-settings.json at
// commit 00d7563704c86f65f16db30d108f42a3539c7f47 ("sandbox", "hooks", "$defs/hookMatcher",
// "$defs/hookCommand" and "env", whose names follow propertyNames ^[A-Z_][A-Z0-9_]*$).
const std::set<std::string> kSchemaKeys{
    "sandbox",
    "sandbox.enabled",
    "sandbox.failIfUnavailable",
    "sandbox.allowUnsandboxedCommands",
    "sandbox.autoAllowBashIfSandboxed",
    "sandbox.filesystem",
    "sandbox.filesystem.denyRead",
    "sandbox.filesystem.allowRead",
    "sandbox.filesystem.allowWrite",
    "sandbox.filesystem.denyWrite",
    "sandbox.filesystem.allowManagedReadPathsOnly",
    "sandbox.network",
    "sandbox.network.allowedDomains",
    "sandbox.network.allowManagedDomainsOnly",
    "sandbox.network.httpProxyPort",
    "sandbox.network.socksProxyPort",
    "env",
    "hooks",
    "hooks.PreToolUse",
    "hooks.PreToolUse[].matcher",
    "hooks.PreToolUse[].hooks",
    "hooks.PreToolUse[].hooks[].type",
    "hooks.PreToolUse[].hooks[].command",
    "hooks.PreToolUse[].hooks[].timeout",
    "permissions",
    "permissions.deny",
};
// Schema keys that let a command run outside the sandbox or a violation pass.
const std::set<std::string> kFailOpenKeys{
    "excludedCommands",
    "enableWeakerNestedSandbox",
    "enableWeakerNetworkIsolation",
    "ignoreViolations",
    "allowAllUnixSockets",
    "allowUnixSockets",
    "allowLocalBinding",
    "allowMachLookup",
    "enabledPlatforms",
    "dangerouslyDisableSandbox",
    "disabled",
};

Object::Ptr parse(const std::string &json) {
  return Poco::JSON::Parser().parse(json).extract<Object::Ptr>();
}

std::vector<std::string> strings(const Array::Ptr &array) {
  std::vector<std::string> out;
  if (!array) return out;
  for (std::size_t i = 0; i < array->size(); ++i) out.push_back(array->getElement<std::string>(i));
  return out;
}

// Every key below object as its path ("a.b", "a[].b" inside arrays); env's names apart.
void collect_keys(const Poco::Dynamic::Var &value, const std::string &prefix,
                  std::vector<std::string> &keys) {
  if (value.type() == typeid(Object::Ptr)) {
    const auto object = value.extract<Object::Ptr>();
    for (const auto &[key, child] : *object) {
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      keys.push_back(path);
      if (path != "env") collect_keys(child, path, keys);
    }
  } else if (value.type() == typeid(Array::Ptr)) {
    const auto array = value.extract<Array::Ptr>();
    for (std::size_t i = 0; i < array->size(); ++i)
      collect_keys(array->get(i), prefix + "[]", keys);
  }
}

class SettingsTest : public ::testing::Test {
 protected:
  SettingsTest() {
    tree.write_policy();
    loaded = policy::load_policy(tree.policy_file());
  }
  std::string read_file(const fs::path &path) {
    std::ifstream in(path);
    return (std::ostringstream() << in.rdbuf()).str();
  }
  AgentTree tree;
  policy::Policy loaded;
};

TEST_F(SettingsTest, DropInHoldsThePolicyFieldByField) {
  const auto settings = parse(policy::render_claude_settings(loaded, tree.policy_file()));

  const auto sandbox = settings->getObject("sandbox");
  ASSERT_TRUE(sandbox);
  EXPECT_TRUE(sandbox->getValue<bool>("enabled"));
  EXPECT_TRUE(sandbox->getValue<bool>("failIfUnavailable"));
  EXPECT_FALSE(sandbox->getValue<bool>("allowUnsandboxedCommands"));
  EXPECT_TRUE(sandbox->getValue<bool>("autoAllowBashIfSandboxed"));

  const auto filesystem = sandbox->getObject("filesystem");
  ASSERT_TRUE(filesystem);
  const auto abs = [&](const std::string &relative) { return "/" + tree.at(relative); };
  EXPECT_EQ(strings(filesystem->getArray("denyRead")),
            (std::vector<std::string>{abs("home/u"), abs("run/user"), "~/src/.state/scan"}));
  EXPECT_EQ(strings(filesystem->getArray("allowRead")),
            (std::vector<std::string>{"~/.gitconfig", abs("run/user/egress")}));
  EXPECT_EQ(strings(filesystem->getArray("allowWrite")),
            (std::vector<std::string>{"~/src", "~/.claude/projects"}));
  // Home and runtime, so that a session started in the home has no Bash even where the hook
  // does not run; the memory glob lies under the harness, denied whole already; .plans does
  // not.
  EXPECT_EQ(strings(filesystem->getArray("denyWrite")),
            (std::vector<std::string>{abs("home/u"), abs("run/user"), "~/src/.state/scan",
                                      "~/.claude", "~/.plans"}));
  EXPECT_TRUE(filesystem->getValue<bool>("allowManagedReadPathsOnly"));

  const auto network = sandbox->getObject("network");
  ASSERT_TRUE(network);
  EXPECT_EQ(strings(network->getArray("allowedDomains")),
            (std::vector<std::string>{"github.com", "*.github.com"}));
  EXPECT_TRUE(network->getValue<bool>("allowManagedDomainsOnly"));
  EXPECT_EQ(network->getValue<int>("httpProxyPort"), 3128);
  EXPECT_EQ(network->getValue<int>("socksProxyPort"), 3128);

  const auto env = settings->getObject("env");
  ASSERT_TRUE(env);
  EXPECT_EQ(env->getValue<std::string>("CLAWPATROL_SANDBOX"), "1");
  EXPECT_EQ(env->getValue<std::string>("GOFLAGS"), "-mod=mod");
  EXPECT_EQ(env->getValue<std::string>("SSL_CERT_FILE"), tree.at("run/user/egress/bundle.pem"));
  for (const auto &[name, value] : loaded.environment()) {
    EXPECT_EQ(env->getValue<std::string>(name), value) << name;
  }
  EXPECT_EQ(env->size(), loaded.environment().size());

  const auto pre_tool_use = settings->getObject("hooks")->getArray("PreToolUse");
  ASSERT_TRUE(pre_tool_use);
  ASSERT_EQ(pre_tool_use->size(), 1u);
  const auto matcher = pre_tool_use->getObject(0);
  EXPECT_EQ(matcher->getValue<std::string>("matcher"),
            "Read|Grep|Glob|Edit|MultiEdit|Write|NotebookEdit|Bash");
  const auto hooks = matcher->getArray("hooks");
  ASSERT_EQ(hooks->size(), 1u);
  const auto hook = hooks->getObject(0);
  EXPECT_EQ(hook->getValue<std::string>("type"), "command");
  EXPECT_EQ(hook->getValue<std::string>("command"),
            "'/opt/sandbox-host/bin/sandbox-host' hook --policy '" + tree.policy_file() + "'");
  EXPECT_EQ(hook->getValue<int>("timeout"), 10);

  // What holds where the hook does not run (claude --bare): the deny entry, and the
  // harness's config entries, the harness holding tool_write inside it.
  const auto deny = strings(settings->getObject("permissions")->getArray("deny"));
  EXPECT_EQ(deny, policy::hookless_rules(loaded).deny);
  for (const std::string tool : {"Read", "Edit"}) {
    EXPECT_NE(
        std::find(deny.begin(), deny.end(), tool + "(" + abs("home/u/src/.state/scan/**") + ")"),
        deny.end());
  }
  EXPECT_NE(
      std::find(deny.begin(), deny.end(), "Edit(" + abs("home/u/.claude/settings.json") + ")"),
      deny.end());
  // The home's entries outside the policy, ~/.ssh though no deny entry names it, and the
  // credential paths that do not exist yet; nothing the policy re-allows.
  for (const std::string path : {"home/u/.ssh", "home/u/.bashrc", "home/u/.aws"}) {
    EXPECT_NE(std::find(deny.begin(), deny.end(), "Read(" + abs(path) + "/**)"), deny.end())
        << path;
  }
  for (const auto &rule : deny) {
    for (const std::string path : {"home/u/src)", "home/u/src/**)", "home/u/.gitconfig"}) {
      EXPECT_EQ(rule.find(abs(path)), std::string::npos) << rule;
    }
  }
}

TEST_F(SettingsTest, EveryKeyIsASchemaKeyAndNoneFailsOpen) {
  const auto settings = parse(policy::render_claude_settings(loaded, tree.policy_file()));
  std::vector<std::string> keys;
  collect_keys(settings, "", keys);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), kSchemaKeys)
      << "the drop-in's keys are not exactly the checked list";
  for (const auto &key : keys) {
    const std::string last = key.substr(key.find_last_of('.') + 1);
    EXPECT_FALSE(kFailOpenKeys.contains(last)) << key;
  }
  const std::regex env_name("^[A-Z_][A-Z0-9_]*$");
  for (const auto &[name, value] : *settings->getObject("env")) {
    EXPECT_TRUE(std::regex_match(name, env_name)) << name;
  }
}

TEST_F(SettingsTest, EmptySourcesAreLeftOut) {
  tree.write_policy("home = \"" + tree.home() + "\"\n");
  const auto bare = policy::load_policy(tree.policy_file());
  const auto settings = parse(policy::render_claude_settings(bare, tree.policy_file()));
  const auto filesystem = settings->getObject("sandbox")->getObject("filesystem");
  EXPECT_EQ(strings(filesystem->getArray("denyRead")), std::vector<std::string>{"/" + tree.home()});
  EXPECT_FALSE(filesystem->has("allowRead"));
  EXPECT_FALSE(filesystem->has("allowWrite"));
  EXPECT_EQ(strings(filesystem->getArray("denyWrite")),
            std::vector<std::string>{"/" + tree.home()});
  EXPECT_TRUE(filesystem->getValue<bool>("allowManagedReadPathsOnly"));
  const auto network = settings->getObject("sandbox")->getObject("network");
  EXPECT_FALSE(network->has("allowedDomains"));
  EXPECT_FALSE(network->has("httpProxyPort"));
  EXPECT_FALSE(network->has("socksProxyPort"));
  // No domains and managed domains only: no host at all, never any host.
  EXPECT_TRUE(network->getValue<bool>("allowManagedDomainsOnly"));
  EXPECT_EQ(settings->getObject("env")->size(), 1u);
}

TEST_F(SettingsTest, TheSamePolicyRendersTheSameBytes) {
  const auto first = policy::render_claude_settings(loaded, tree.policy_file());
  EXPECT_EQ(
      policy::render_claude_settings(policy::load_policy(tree.policy_file()), tree.policy_file()),
      first);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.back(), '\n');
  EXPECT_EQ(first.substr(0, 16), "{\n  \"sandbox\": {") << "two-space indent, sandbox first";
  // sandbox-host policy render prints the same bytes.
  const auto cli =
      test::run_process({SANDBOX_HOST_EXE, "policy", "render", "--policy", tree.policy_file()});
  EXPECT_EQ(cli.code, 0) << cli.err;
  EXPECT_EQ(cli.out, first);
}

TEST_F(SettingsTest, TheHookRunsTheRenderingSandboxHostWhenThePolicyNamesNone) {
  auto toml = tree.policy_toml();
  toml.erase(toml.find("exe = "), toml.find('\n', toml.find("exe = ")) - toml.find("exe = ") + 1);
  tree.write_policy(toml);
  const auto cli =
      test::run_process({SANDBOX_HOST_EXE, "policy", "render", "--policy", tree.policy_file()});
  ASSERT_EQ(cli.code, 0) << cli.err;
  const auto hook = parse(cli.out)
                        ->getObject("hooks")
                        ->getArray("PreToolUse")
                        ->getObject(0)
                        ->getArray("hooks")
                        ->getObject(0);
  EXPECT_EQ(hook->getValue<std::string>("command"), "'" + fs::canonical(SANDBOX_HOST_EXE).string() +
                                                        "' hook --policy '" + tree.policy_file() +
                                                        "'");
}

TEST_F(SettingsTest, InstallIsAtomicAndLeavesTheSameSettingsUntouched) {
  const fs::path managed = tree.at("etc/claude-code");
  EXPECT_TRUE(policy::install_drop_in(loaded, tree.policy_file(), managed));
  const fs::path drop_in = managed / "managed-settings.d" / "clawpatrol-sandbox.json";
  ASSERT_EQ(policy::drop_in_path(managed), drop_in);
  EXPECT_EQ(read_file(drop_in), policy::render_claude_settings(loaded, tree.policy_file()));
  struct stat first {};
  ASSERT_EQ(::stat(drop_in.c_str(), &first), 0);
  EXPECT_EQ(first.st_mode & 07777, 0644u);
  struct stat dir {};
  ASSERT_EQ(::stat(drop_in.parent_path().c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 07777, 0755u);

  EXPECT_FALSE(policy::install_drop_in(loaded, tree.policy_file(), managed));
  struct stat again {};
  ASSERT_EQ(::stat(drop_in.c_str(), &again), 0);
  EXPECT_EQ(again.st_ino, first.st_ino);
  EXPECT_EQ(again.st_mtim.tv_sec, first.st_mtim.tv_sec);
  EXPECT_EQ(again.st_mtim.tv_nsec, first.st_mtim.tv_nsec);

  // A changed policy replaces the file: a new inode, never the old one rewritten in place.
  auto changed = loaded;
  changed.domains.push_back("proxy.example.net");
  EXPECT_TRUE(policy::install_drop_in(changed, tree.policy_file(), managed));
  struct stat replaced {};
  ASSERT_EQ(::stat(drop_in.c_str(), &replaced), 0);
  EXPECT_NE(replaced.st_ino, first.st_ino);
  EXPECT_EQ(replaced.st_mode & 07777, 0644u);
  EXPECT_EQ(read_file(drop_in), policy::render_claude_settings(changed, tree.policy_file()));
  std::vector<std::string> entries;
  for (const auto &entry : fs::directory_iterator(drop_in.parent_path())) {
    entries.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(entries, std::vector<std::string>{"clawpatrol-sandbox.json"})
      << "a temporary file left";
}

TEST_F(SettingsTest, InstallRefusesADirectoryOthersMayWrite) {
  const fs::path managed = tree.at("etc/claude-code");
  fs::create_directories(managed / "managed-settings.d");
  fs::permissions(managed / "managed-settings.d", fs::perms(0775));
  try {
    policy::install_drop_in(loaded, tree.policy_file(), managed);
    ADD_FAILURE() << "installed into a group-writable managed-settings.d";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("may be written by group or others"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("managed-settings.d"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(managed / "managed-settings.d" / "clawpatrol-sandbox.json"));

  fs::permissions(managed / "managed-settings.d", fs::perms(0755));
  fs::permissions(managed, fs::perms(0777));
  EXPECT_THROW(policy::install_drop_in(loaded, tree.policy_file(), managed), std::exception);
  EXPECT_FALSE(fs::exists(managed / "managed-settings.d" / "clawpatrol-sandbox.json"));
}

TEST_F(SettingsTest, InstallRefusesASymlinkedDropInDirectory) {
  const fs::path managed = tree.at("etc/claude-code");
  fs::create_directories(managed);
  fs::create_directories(tree.at("elsewhere"));
  fs::create_directory_symlink(tree.at("elsewhere"), managed / "managed-settings.d");
  try {
    policy::install_drop_in(loaded, tree.policy_file(), managed);
    ADD_FAILURE() << "installed through a symbolic link";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(tree.at("elsewhere")));
}

TEST_F(SettingsTest, PolicyInstallCommandSaysWhatItDid) {
  const auto managed = tree.at("etc/claude-code");
  const auto drop_in = managed + "/managed-settings.d/clawpatrol-sandbox.json";
  fs::remove_all(tree.at("home/u/src/.state"));
  const std::vector<std::string> install{SANDBOX_HOST_EXE,   "policy",        "install", "--policy",
                                         tree.policy_file(), "--managed-dir", managed};
  const auto first = test::run_process(install);
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(first.out, "installed " + drop_in + "\n");
  // The deny paths every session's sandbox mounts over exist now.
  EXPECT_TRUE(fs::is_directory(tree.at("home/u/src/.state/scan")));
  const auto second = test::run_process(install);
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, "unchanged " + drop_in + "\n");
}

TEST_F(SettingsTest, PolicyCheckPrintsTheCommandViewAndRefusesABadPolicy) {
  const auto check =
      test::run_process({SANDBOX_HOST_EXE, "policy", "check", "--policy", tree.policy_file()});
  EXPECT_EQ(check.code, 0) << check.err;
  EXPECT_NE(check.out.find("none  " + tree.home() + "\n"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("read  " + tree.at("home/u/.gitconfig") + "\n"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("write " + tree.at("home/u/src") + "\n"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("none  " + tree.at("home/u/src/.state/scan") + "\n"), std::string::npos)
      << check.out;
  // And what a session without hooks is held to, and what it is not.
  EXPECT_NE(check.out.find("  Read(/" + tree.at("home/u/src/.state/scan") + "/**)\n"),
            std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("not held without the hook"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("  Read(/" + tree.at("home/u/.ssh") + "/**)\n"), std::string::npos)
      << check.out;
  EXPECT_NE(check.out.find("  Read and Edit of an entry made in home " + tree.home() +
                           " after `sandbox-host policy install`: the rules name the entries it "
                           "held then, so a new one stays open to a session without hooks until "
                           "the next `policy install`\n"),
            std::string::npos)
      << check.out;

  tree.write_policy("home = \"" + tree.home() + "\"\nproxy_port = 70000\n");
  for (const std::string sub : {"check", "render", "install"}) {
    std::vector<std::string> argv{SANDBOX_HOST_EXE, "policy", sub, "--policy", tree.policy_file()};
    if (sub == "install") argv.insert(argv.end(), {"--managed-dir", tree.at("m")});
    const auto bad = test::run_process(argv);
    EXPECT_EQ(bad.code, 125) << sub;
    EXPECT_NE(bad.err.find("sandbox-host policy " + sub + ": " + tree.policy_file()),
              std::string::npos)
        << bad.err;
    EXPECT_NE(bad.err.find("proxy_port"), std::string::npos) << bad.err;
    EXPECT_EQ(bad.out, "");
  }
  EXPECT_FALSE(fs::exists(tree.at("m")));
}

}  // namespace
}  // namespace sandbox_host::agent_hook_test
