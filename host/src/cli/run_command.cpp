#include "commands.hpp"

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/policy/agent_env.hpp>
#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/policy_view.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string_view>
#include <system_error>

namespace sandbox_host::cli {
namespace fs = std::filesystem;
namespace {

struct RunOptions {
  std::optional<std::string> config;
  std::optional<std::string> policy;
  std::optional<std::string> name;
  std::optional<std::string> network;
  std::optional<std::string> socket_dir;
  std::optional<std::string> tmp_dir;
  std::vector<std::string> read;
  bool prepared = false;
  std::vector<std::string> command;
};

// A directory made for this run alone (0700), removed with everything in it afterwards.
class PrivateDir {
 public:
  PrivateDir() {
    const char *base = ::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && base[0] == '/' ? base : "/tmp") + "/sandbox-host-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "create " + pattern);
    }
    path_ = fs::canonical(pattern);
  }
  ~PrivateDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  PrivateDir(const PrivateDir &) = delete;
  PrivateDir &operator=(const PrivateDir &) = delete;
  const fs::path &path() const noexcept { return path_; }

 private:
  fs::path path_;
};

std::string resolved(const std::string &path, const char *what) {
  std::error_code ec;
  fs::path canonical = fs::canonical(path, ec);
  if (ec) throw std::runtime_error(std::string(what) + " " + path + ": " + ec.message());
  return canonical.string();
}

// The signals a terminal or a service manager sends; the plugin runs in its own session,
// so it only sees them when we pass them on.
sigset_t forwarded_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, sig);
  return set;
}

ExitStatus wait_forwarding_signals(Child &child, const sigset_t &signals) {
  UniqueFd signal_fd(::signalfd(-1, &signals, SFD_CLOEXEC));
  UniqueFd pid_fd(static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0)));
  if (signal_fd.get() < 0 || pid_fd.get() < 0) {
    throw std::system_error(errno, std::generic_category(), "watch the plugin");
  }
  for (;;) {
    pollfd fds[2] = {{pid_fd.get(), POLLIN, 0}, {signal_fd.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    if (fds[0].revents != 0) return child.wait();
    signalfd_siginfo info{};
    if (fds[1].revents != 0 && ::read(signal_fd.get(), &info, sizeof info) == sizeof info) {
      ::kill(child.pid(), static_cast<int>(info.ssi_signo));
    }
  }
}

// What a long-running host's SandboxPool does, once: prepare, wait until ready, launch.
// The plugin dies with the pool, so the pool lives until the plugin has exited.
Child launch_prepared(SandboxPool &pool, const std::string &mode, const Spec &spec) {
  if (!pool.preparing()) {
    throw std::runtime_error("--prepared: backend " + mode + " does not prepare sandboxes");
  }
  if (pool.wait_ready(std::chrono::seconds(10)) == 0) {
    throw std::runtime_error(
        "--prepared: the prepared sandbox did not get ready (the audit "
        "record above says why)");
  }
  return pool.launch(spec);
}

// A command named without a slash is looked up in PATH, as a shell does.
std::string command_binary(const std::string &name) {
  if (name.find('/') != std::string::npos) return resolved(name, "plugin binary");
  const char *path = ::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty() || dir.front() != '/') continue;
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) {
      return resolved(candidate.string(), "plugin binary");
    }
  }
  throw std::runtime_error("command " + name + ": not found in PATH");
}

// Under a policy, the egress proxy is what holds commands to its domains: a proxy that lets
// through a host the policy does not list would widen it.
void require_proxy_within_domains(const policy::Policy &agent, const EgressConfig &egress,
                                  const std::string &config_source) {
  std::vector<std::string> wider;
  for (const auto &host : egress.allow) {
    if (std::find(agent.domains.begin(), agent.domains.end(), host) == agent.domains.end()) {
      wider.push_back(host);
    }
  }
  if (wider.empty()) return;
  std::string list;
  for (const auto &host : wider) list += (list.empty() ? "" : ", ") + host;
  throw std::runtime_error(
      "the egress proxy of " +
      (config_source.empty() ? std::string("the built-in defaults") : config_source) + " allows " +
      list + ", which the policy " + agent.source +
      " does not list in domains; a command held to the policy reaches "
      "only its domains (make [egress] allow a subset of them)");
}

// The command's environment under a policy: what the backend set, HOME at the policy's
// home (the command sees the real one, denied apart from what the policy re-allows), the
// policy's variables and SANDBOX_RUNTIME, which tells a shell that a sandbox holds it.
void set_policy_environment(std::vector<std::string> &env, const policy::Policy &agent) {
  std::map<std::string, std::string> set = agent.environment();
  set["HOME"] = agent.home;
  set[std::string(policy::kEnvRuntime)] = "1";
  std::erase_if(env, [&](const std::string &entry) {
    return set.contains(entry.substr(0, entry.find('=')));
  });
  for (const auto &[name, value] : set) env.push_back(name + "=" + value);
}

int run_plugin(const RunOptions &options) {
  Host host(load_config_or_defaults(options.config));
  std::optional<policy::Policy> agent;
  if (options.policy) {
    if (options.prepared) {
      throw std::runtime_error(
          "--prepared and --policy: a prepared sandbox is a plugin's deny-by-default tree, "
          "not a policy's view; leave one out");
    }
    agent = policy::load_policy(*options.policy);
    agent->mount_points();
  }

  Spec spec;
  spec.binary_path = command_binary(options.command.front());
  spec.args.assign(options.command.begin() + 1, options.command.end());
  spec.plugin_name = options.name.value_or(fs::path(spec.binary_path).filename().string());
  const PluginConfig plugin = host.config().plugin(spec.plugin_name);
  spec.network = plugin.network.value_or(Network::none);
  // A policy's commands reach its domains through the egress proxy, where there is one.
  if (agent && !plugin.network && host.config().egress) spec.network = Network::proxied;
  if (options.network) {
    auto network = parse_network(*options.network);
    if (!network) {
      throw std::runtime_error("--network " + *options.network +
                               ": not a network; allowed: none, outbound, proxied");
    }
    spec.network = *network;
  }
  if (spec.network == Network::proxied) {
    if (!host.config().egress) {
      throw std::runtime_error("network proxied goes through the egress proxy, and " +
                               (host.config().source.empty()
                                    ? std::string("the built-in defaults have")
                                    : host.config().source + " has") +
                               " no [egress] table to say where it listens");
    }
    route_through_egress(spec, *host.config().egress);
    if (agent) {
      require_proxy_within_domains(*agent, *host.config().egress, host.config().source);
    }
  }
  if (agent) {
    spec.view = policy::command_view(*agent);
    // A view is what makes a launch a policy's: one whose entries all are missing still
    // shows the host read-only, never a plugin's tree (nor off's nothing).
    if (spec.view.empty()) spec.view.push_back({"/", PathAccess::read});
  }
  for (const auto &path : plugin.read) spec.read_paths.push_back(resolved(path, "read path"));
  for (const auto &path : options.read) spec.read_paths.push_back(resolved(path, "--read"));

  std::unique_ptr<PrivateDir> private_socket_dir, private_tmp_dir;
  if (options.socket_dir) {
    spec.socket_dir = resolved(*options.socket_dir, "--socket-dir");
  } else {
    private_socket_dir = std::make_unique<PrivateDir>();
    spec.socket_dir = private_socket_dir->path().string();
  }
  if (options.tmp_dir) {
    spec.tmp_dir = resolved(*options.tmp_dir, "--tmp-dir");
  } else if (private_socket_dir) {
    fs::create_directory(private_socket_dir->path() / "tmp");
    spec.tmp_dir = (private_socket_dir->path() / "tmp").string();
  } else {
    private_tmp_dir = std::make_unique<PrivateDir>();
    spec.tmp_dir = private_tmp_dir->path().string();
  }

  const std::string mode = host.mode_for(spec.plugin_name);
  const sigset_t signals = forwarded_signals();
  sigset_t previous;
  ::sigprocmask(SIG_BLOCK, &signals, &previous);
  std::optional<SandboxPool> pool;
  if (options.prepared)
    pool.emplace(host, mode, spec.network, PoolOptions{.depth = 1, .replace = false});
  Child child = [&] {
    if (pool) return launch_prepared(*pool, mode, spec);
    LaunchCommand command = host.command(spec, mode);
    if (agent) set_policy_environment(command.env, *agent);
    return spawn(command);
  }();
  const ExitStatus status = wait_forwarding_signals(child, signals);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  return status.shell_status();
}

}  // namespace

Command add_run_command(CLI::App &app) {
  auto options = std::make_shared<RunOptions>();
  auto *sub = app.add_subcommand(
      "run",
      "Launch one plugin under the probed, configured or forced backend; its stdio passes "
      "through and sandbox-host exits with its status (125: sandbox-host itself failed, "
      "87: the sandbox could not be set up)");
  sub->add_option("--config", options->config, "Config file");
  sub->add_option("--policy", options->policy,
                  "Hold the command to an agent policy (docs/agent-policy.md): the host's files "
                  "readable but the policy's home and runtime directories, writable only where "
                  "it says; network proxied through [egress] when the config has one");
  sub->add_option("--name", options->name,
                  "Plugin name (config table and messages; "
                  "default: the binary's file name)");
  sub->add_option("--network", options->network,
                  "none, outbound or proxied (through the [egress] proxy; default: the "
                  "config's, else none)");
  sub->add_option("--socket-dir", options->socket_dir,
                  "Read-write directory shared with the host at the same path (default: a "
                  "private one, removed afterwards)");
  sub->add_option("--tmp-dir", options->tmp_dir,
                  "The plugin's HOME and TMPDIR (default: a private one, removed afterwards)");
  sub->add_option("--read", options->read, "Extra read-only path, recursive (repeatable)");
  sub->add_flag("--prepared", options->prepared,
                "Launch through a sandbox prepared before the plugin's Spec is known, as a "
                "long-running host's SandboxPool does (checks that path on this host)");
  sub->add_option("command", options->command,
                  "-- BINARY [ARGS...] (a name without a slash is looked up in PATH)")
      ->required();
  sub->positionals_at_end();
  return {sub, [options] { return run_plugin(*options); }};
}

}  // namespace sandbox_host::cli
