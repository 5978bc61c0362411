// The variables a caller names for a plugin reach the plugin's own execve and no host
// process: every name the dynamic loader and glibc read, through every way a plugin's
// variables come (run --env, [plugins.<name>] env, a go-plugin handshake, an agent policy's
// variables, a prepared sandbox, the launch service), on both Linux backends, as root and
// as nobody.
// strace shows each execve's environment, which is what that program's loader and libc read;
// a preloaded library says where it was loaded.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::ProcessResult;
using test::Service;
using test::User;

// What the loader (ld.so(8)'s environment, and the names it drops for set-user-ID programs)
// and glibc (malloc, locale, iconv, the resolver, time zones) read, each with a value that
// leaves /bin/true working. LD_PRELOAD and LD_AUDIT name the probe library.
std::vector<std::pair<std::string, std::string>> loader_variables(const std::string &probe) {
  return {{"LD_PRELOAD", probe},
          {"LD_AUDIT", probe},
          {"LD_LIBRARY_PATH", "/nonexistent-lib"},
          {"LD_DEBUG", "unused"},
          {"LD_DEBUG_OUTPUT", "/nonexistent-debug"},
          {"LD_PROFILE", "nonexistent.so"},
          {"LD_PROFILE_OUTPUT", "/nonexistent-profile"},
          {"LD_BIND_NOW", "1"},
          {"LD_BIND_NOT", "1"},
          {"LD_DYNAMIC_WEAK", "1"},
          {"LD_ORIGIN_PATH", "/nonexistent-origin"},
          {"LD_USE_LOAD_BIAS", "0"},
          {"LD_HWCAP_MASK", "0"},
          {"LD_ASSUME_KERNEL", "2.6.32"},
          {"LD_SHOW_AUXV", "1"},
          {"GLIBC_TUNABLES", "glibc.malloc.check=0"},
          {"MALLOC_CHECK_", "0"},
          {"MALLOC_TOP_PAD_", "0"},
          {"MALLOC_PERTURB_", "0"},
          {"MALLOC_MMAP_THRESHOLD_", "131072"},
          {"MALLOC_TRIM_THRESHOLD_", "131072"},
          {"MALLOC_MMAP_MAX_", "65536"},
          {"MALLOC_ARENA_MAX", "8"},
          {"MALLOC_ARENA_TEST", "8"},
          {"MALLOC_TRACE", "/nonexistent-trace"},
          {"GCONV_PATH", "/nonexistent-gconv"},
          {"GETCONF_DIR", "/nonexistent-getconf"},
          {"HOSTALIASES", "/nonexistent-hosts"},
          {"LOCALDOMAIN", "example.com"},
          {"LOCPATH", "/nonexistent-locale"},
          {"NIS_PATH", "nonexistent"},
          {"NLSPATH", "/nonexistent-nls"},
          {"RESOLV_HOST_CONF", "/nonexistent-resolv"},
          {"RES_OPTIONS", "ndots:1"},
          {"TZDIR", "/nonexistent-zoneinfo"},
          {"TZ", "UTC"},
          {"LANGUAGE", "C"},
          {"LC_ALL", "C"}};
}

// One execve as strace printed it.
struct Exec {
  std::string path;
  std::string line;
  // Whether its environment (strace's last array) has an entry NAME=: one that opens the
  // array or follows ", ", not text inside another entry's value (stage 1's Spec carries
  // the plugin's environment as JSON).
  bool sets(const std::string &name) const {
    const auto end = line.rfind(") = ");
    const auto envp = line.rfind(", [", end == std::string::npos ? std::string::npos : end);
    if (envp == std::string::npos) return false;
    return line.find("[\"" + name + "=", envp) != std::string::npos ||
           line.find(", \"" + name + "=", envp) != std::string::npos;
  }
  std::string shown() const { return line.size() > 400 ? line.substr(0, 400) + "..." : line; }
};

std::vector<Exec> execs(const fs::path &trace) {
  std::vector<Exec> found;
  std::ifstream in(trace);
  for (std::string line; std::getline(in, line);) {
    const auto call = line.find("execve(\"");
    if (call == std::string::npos) continue;
    const auto start = call + 8;
    found.push_back({line.substr(start, line.find('"', start) - start), line});
  }
  return found;
}

bool is_host_binary(const std::string &path) {
  return path == "/proc/self/exe" || path.ends_with("/sandbox-host") ||
         path.ends_with("/sandbox-host-broker");
}

bool is_plugin(const std::string &path) {
  return path == "/bin/true" || path == "/usr/bin/true";
}

enum class Channel { env, config, handshake, policy, prepared, service };

std::string channel_name(Channel channel) {
  switch (channel) {
    case Channel::env:
      return "run_env";
    case Channel::config:
      return "config_env";
    case Channel::handshake:
      return "handshake";
    case Channel::policy:
      return "policy_vars";
    case Channel::prepared:
      return "prepared";
    case Channel::service:
      return "service";
  }
  return "";
}

struct Case {
  std::string backend;
  Channel channel;
  User user;
};

class LoaderVariables : public ::testing::TestWithParam<Case> {};

TEST_P(LoaderVariables, ReachThePluginsExecveAndNoHostProcess) {
  if (::access("/usr/bin/strace", X_OK) != 0) {
    GTEST_SKIP() << "strace is not installed (scripts/setup.sh installs it)";
  }
  const Case c = GetParam();
  const test::UnprivilegedInstall install;
  const std::string probe = install.add_binary(PRELOAD_PROBE);
  test::TempFile work("", "unused");
  ASSERT_EQ(::chown(work.dir().c_str(), test::kNobody, test::kNobody), 0);
  const std::vector<std::string> as_user =
      c.user == User::nobody ? test::as_nobody() : std::vector<std::string>{};
  const fs::path trace = work.dir() / "trace";
  const std::vector<std::string> strace{
      "/usr/bin/strace", "-f", "-qq",         "-v", "-s",          "65536", "-e",
      "trace=execve",    "-e", "signal=none", "-o", trace.string()};
  const auto variables = loader_variables(probe);
  // Under a policy the variables are the policy's; the rest name them on the command line
  // or in the config.
  std::vector<std::string> env_args;
  std::string config_env, policy_vars;
  for (const auto &[name, value] : variables) {
    env_args.insert(env_args.end(), {"--env", name + "=" + value});
    config_env += (config_env.empty() ? "" : ", ") + ("\"" + name + "=" + value + "\"");
    policy_vars += name + " = \"" + value + "\"\n";
  }
  const fs::path config = work.dir() / "config.toml";
  std::ofstream(config) << "[plugins.true]\nenv = [" << config_env << "]\n";
  const fs::path policy = work.dir() / "policy.toml";
  std::ofstream(policy) << "home = \"" << (work.dir() / "home").string() << "\"\n[vars]\n"
                        << policy_vars;
  fs::create_directory(work.dir() / "home");

  const std::vector<std::string> grants{"--backend", c.backend, "--read",
                                        fs::path(probe).parent_path().string()};
  ProcessResult result;
  std::vector<std::string> expected_names;
  for (const auto &variable : variables) expected_names.push_back(variable.first);
  if (c.channel == Channel::service) {
    Service service(c.user, "", "[plugins.true]\nsandbox = \"" + c.backend + "\"\n", strace);
    std::vector<std::string> args = grants;
    args.insert(args.end(), env_args.begin(), env_args.end());
    args.insert(args.end(), {"--", "/bin/true"});
    result = test::run_process(service.launch(args));
  } else {
    std::vector<std::string> argv = as_user;
    argv.insert(argv.end(), strace.begin(), strace.end());
    argv.insert(argv.end(), {install.sandbox_host(), "run"});
    argv.insert(argv.end(), grants.begin(), grants.end());
    test::ProcessOptions options;
    options.env = std::vector<std::string>{"PATH=/usr/bin:/bin"};
    // A policy's command starts where it was launched: somewhere nobody may enter too (the
    // build may sit in root's 0700 home).
    options.cwd = work.dir().string();
    switch (c.channel) {
      case Channel::env:
        argv.insert(argv.end(), env_args.begin(), env_args.end());
        break;
      case Channel::prepared:
        argv.push_back("--prepared");
        argv.insert(argv.end(), env_args.begin(), env_args.end());
        break;
      case Channel::config:
        argv.insert(argv.end(), {"--config", config.string()});
        break;
      case Channel::policy:
        argv.insert(argv.end(), {"--policy", policy.string()});
        break;
      case Channel::handshake:
        // The magic cookie's name is the caller's to choose, its value from run's own
        // environment: the loader of run itself reads it, which is the caller's doing.
        argv.insert(argv.end(), {"--handshake", "GLIBC_TUNABLES"});
        options.env->push_back("GLIBC_TUNABLES=glibc.malloc.check=0");
        expected_names = {"GLIBC_TUNABLES"};
        break;
      case Channel::service:
        break;
    }
    argv.insert(argv.end(), {"--", "/bin/true"});
    result = test::run_process(argv, options);
  }
  ASSERT_EQ(result.code, 0) << result.err;

  const std::vector<Exec> all = execs(trace);
  ASSERT_FALSE(all.empty()) << "strace wrote no execve to " << trace;
  bool plugin_seen = false;
  // The first execve is the traced command's own (run, or serve), with the caller's
  // environment.
  for (std::size_t i = 1; i < all.size(); ++i) {
    const Exec &exec = all[i];
    if (is_host_binary(exec.path)) {
      for (const auto &name : expected_names) {
        EXPECT_FALSE(exec.sets(name)) << name << " reached a host process: " << exec.shown();
      }
    } else if (is_plugin(exec.path)) {
      plugin_seen = true;
      for (const auto &name : expected_names) {
        EXPECT_TRUE(exec.sets(name)) << name << " did not reach the plugin: " << exec.shown();
      }
    }
  }
  // strace as nobody cannot read the arguments of a process in the sandbox's user namespace
  // once its init is no longer dumpable: the plugin's execve shows as addresses there, and
  // the probe's line below says what reached it.
  if (c.user == User::root || c.backend != "namespaces") {
    EXPECT_TRUE(plugin_seen) << "no execve of the plugin in " << trace;
  }
  EXPECT_EQ(result.err.find("preload-probe: loaded in sandbox-host"), std::string::npos)
      << result.err;
  if (c.channel != Channel::handshake) {
    EXPECT_NE(result.err.find("preload-probe: loaded in true"), std::string::npos) << result.err;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (User user : {User::root, User::nobody}) {
    for (const char *backend : {"namespaces", "landlock"}) {
      for (Channel channel : {Channel::env, Channel::config, Channel::handshake, Channel::policy,
                              Channel::prepared, Channel::service}) {
        all.push_back({backend, channel, user});
      }
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Channels, LoaderVariables, ::testing::ValuesIn(cases()),
                         [](const auto &info) {
                           return info.param.backend + "_" + channel_name(info.param.channel) +
                                  "_" + test::user_name(info.param.user);
                         });

}  // namespace
}  // namespace sandbox_host
