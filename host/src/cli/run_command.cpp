#include "commands.hpp"

#include <boost/algorithm/string/join.hpp>

#include <sandbox_host/egress/destination/host_allow_list.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_client/launch_client.hpp>
#include <sandbox_host/host/launch_plan.hpp>
#include <sandbox_host/host/learn/learn_observer.hpp>
#include <sandbox_host/host/learn/learn_report.hpp>

#include <sandbox_host/host/policy/agent_env.hpp>
#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/claude_settings.hpp>
#include <sandbox_host/host/policy/policy_view.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/unique_fd.hpp>
#include "launch_options.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string_view>
#include <system_error>

namespace sandbox_host::cli {
namespace {

struct RunOptions {
  std::optional<std::string> config;
  std::optional<std::string> policy;
  std::optional<std::string> via;
  bool prepared = false;
  bool harness = false;
  bool learn = false;
  std::optional<std::string> learn_json;  // where the learn report's JSON goes
  LaunchOptions launch;
};

// What --learn refuses before anything is launched: it learns from a launch run here, by a
// plugin's deny-by-default tree under a confining Linux backend.
void require_learnable(const RunOptions &options) {
  if (!options.learn) return;
  if (options.via) {
    throw std::runtime_error(
        "--learn and --via: the launch service runs the plugin, and its traced calls reach "
        "the service, not this process; learn from a launch run here (leave out --via)");
  }
  if (options.policy) {
    throw std::runtime_error(
        "--learn and --policy: a policy's view is its own grant list (docs/agent-policy.md, "
        "`sandbox-host policy check`); --learn suggests a plugin's [plugins.<name>] lines");
  }
  if (options.prepared) {
    throw std::runtime_error(
        "--learn and --prepared: a prepared sandbox loads its filter before its launch is "
        "known; learn from a sandbox set up for this launch (leave out --prepared)");
  }
}

void require_learnable_mode(const std::string &mode) {
  if (mode == "namespaces" || mode == "landlock") return;
  throw std::runtime_error(
      "--learn: backend " + mode +
      " is not one whose calls sandbox-host traces (namespaces, landlock)" +
      (mode == kModeOff ? "; off grants everything, so nothing is refused" : ""));
}

// The learn report: text on stderr, after the plugin's own output; JSON where asked.
void report_learned(const learn::LearnObserver &observer, const Host &host, const Spec &spec,
                    const std::string &mode, const RunOptions &options) {
  learn::ReportContext context;
  context.plugin = spec.plugin_name;
  context.backend = mode;
  context.network = spec.network;
  context.read_paths = spec.read_paths;
  if (const auto &egress = host.config().egress) {
    context.egress_table = true;
    context.egress_allow = egress->allow;
    context.egress_allow_addresses = egress->allow_addresses;
  }
  const learn::GrantAdvice advice({host.config().broker.state_dir.string()});
  const learn::LearnReport report =
      learn::make_report(observer.findings(), context, observer.grants(), advice);
  std::cerr << "\n" << learn::render_text(report) << std::flush;
  if (options.learn_json) {
    std::ofstream out(*options.learn_json, std::ios::trunc);
    out << learn::render_json(report);
    if (!out.flush()) {
      throw std::runtime_error("--learn-json " + *options.learn_json + ": cannot write it");
    }
  }
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
Child launch_prepared(SandboxPool &pool, const std::string &mode, const Spec &spec,
                      const std::vector<std::string> &plugin_env) {
  if (!pool.preparing()) {
    throw std::runtime_error("--prepared: backend " + mode + " does not prepare sandboxes");
  }
  if (pool.wait_ready(std::chrono::seconds(10)) == 0) {
    throw std::runtime_error(
        "--prepared: the prepared sandbox did not get ready (the audit "
        "record above says why)");
  }
  return pool.launch(spec, {}, plugin_env);
}

// Under a policy, the egress proxy is what holds commands to its domains: a proxy that lets
// through a host the policy does not list would widen it. Entries are read as the proxy
// reads them. An egress module's allow list, if it has one, is its own, which the policy
// cannot read: such a launch is refused rather than held to domains nothing checked.
void require_proxy_within_domains(const policy::Policy &agent, const EgressConfig &egress,
                                  const std::string &config_source) {
  const std::string source =
      config_source.empty() ? std::string("the built-in defaults") : config_source;
  if (!egress.builtin()) {
    throw std::runtime_error(
        "the egress of " + source + " is the module " + egress.implementation +
        ", whose allow list the policy " + agent.source +
        " cannot check against its domains; a command held to the policy goes through the "
        "built-in proxy ([egress] implementation = \"" +
        std::string(kBuiltinEgress) + "\") or gets network none (--network none)");
  }
  const std::vector<std::string> wider =
      egress::HostAllowList::outside(egress.allow, agent.domains);
  if (wider.empty()) return;
  const std::string list = boost::algorithm::join(wider, ", ");
  throw std::runtime_error("the egress proxy of " + source + " allows " + list +
                           ", which the policy " + agent.source +
                           " does not list in domains; a command held to the policy reaches "
                           "only its domains (make [egress] allow a subset of them)");
}

// What a policy sets in the command's environment over BaseEnv's and the backend's: HOME
// at the policy's home (the command sees the real one, denied apart from what the policy
// re-allows), the policy's variables and SANDBOX_RUNTIME, which tells a shell that a
// sandbox holds it.
std::vector<std::string> policy_environment(const policy::Policy &agent) {
  std::map<std::string, std::string> set = agent.environment();
  set["HOME"] = agent.home;
  set[std::string(policy::kEnvRuntime)] = "1";
  std::vector<std::string> env;
  for (const auto &[name, value] : set) env.push_back(name + "=" + value);
  return env;
}

// The launch service that --via or SANDBOX_HOST_LAUNCHER names, for a launch it can take.
std::optional<std::string> launch_service(const RunOptions &options) {
  if (options.via) {
    if (options.config || options.policy || options.prepared) {
      throw std::runtime_error(
          "--via: the launch service plans the launch from its own config and prepared "
          "sandboxes; --config, --policy and --prepared are for a launch run here");
    }
    return options.via;
  }
  const char *socket = ::getenv(std::string(kEnvLauncher).c_str());
  if (socket == nullptr || *socket == '\0' || options.config || options.policy ||
      options.prepared || options.learn) {
    // --learn traces a launch run here, as --config and --policy plan one.
    return std::nullopt;
  }
  return std::string(socket);
}

int run_plugin(const RunOptions &options) {
  require_learnable(options);
  if (options.harness && !options.policy) {
    throw std::runtime_error("--harness holds a harness to a policy: give --policy too");
  }
  if (const auto socket = launch_service(options)) {
    return launch_via("sandbox-host run", *socket, make_launch_request(options.launch));
  }
  Host host(load_config_or_defaults(options.config));
  std::optional<policy::Policy> agent;
  const policy::ViewFor view_for =
      options.harness ? policy::ViewFor::harness : policy::ViewFor::commands;
  if (options.policy) {
    if (options.prepared) {
      throw std::runtime_error(
          "--prepared and --policy: a prepared sandbox is a plugin's deny-by-default tree, "
          "not a policy's view; leave one out");
    }
    agent = policy::load_policy(*options.policy);
    agent->mount_points(view_for);
  }

  std::optional<std::vector<PathRule>> view;
  if (agent) {
    // A harness held whole sees no drop-ins: the policy's would turn on Claude Code's own
    // sandbox, where the nested user namespace it needs is refused and failIfUnavailable
    // then stops every command. The directory goes, not the file: Claude Code warns about
    // a drop-in it cannot read, and Landlock cannot leave a directory listable with one
    // entry hidden. Only for a harness: under Landlock, hiding it leaves /etc unlistable.
    std::vector<std::string> hidden;
    if (options.harness) {
      hidden.push_back(policy::drop_in_path(policy::managed_dir()).parent_path().string());
    }
    view = policy::command_view(*agent, view_for, hidden);
  }
  LaunchPlan plan = plan_launch(host, make_launch_request(options.launch), std::move(view));
  const Spec &spec = plan.spec;
  if (agent && spec.network == Network::proxied) {
    require_proxy_within_domains(*agent, *host.config().egress, host.config().source);
  }

  std::shared_ptr<learn::LearnObserver> learner;
  if (options.learn) {
    require_learnable_mode(plan.mode);
    learner =
        std::make_shared<learn::LearnObserver>(learn::SpecGrants(spec, plan.mode), spec.proxy_port);
  }

  const sigset_t signals = forwarded_signals();
  sigset_t previous;
  ::sigprocmask(SIG_BLOCK, &signals, &previous);
  std::optional<SandboxPool> pool;
  if (options.prepared)
    pool.emplace(host, plan.mode, spec.network, PoolOptions{.depth = 1, .replace = false});
  Child child = [&] {
    if (pool) return launch_prepared(*pool, plan.mode, spec, plan.plugin_env);
    LaunchCommand command =
        host.command(spec, plan.mode, plan.plugin_env,
                     agent ? policy_environment(*agent) : std::vector<std::string>{});
    // The host's seccomp supervisor passes it every traced call.
    command.learn = learner;
    return spawn(command);
  }();
  const ExitStatus status = wait_forwarding_signals(child, signals);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  // Where the audit writes text to this stderr, the death's record is that line already.
  const bool audit_said_it =
      host.config().audit_path == "stderr" && host.config().audit_format == AuditFormat::text;
  if (child.death() && !audit_said_it) {
    write_text(STDERR_FILENO, child.death()->line() + "\n");
  }
  if (learner) report_learned(*learner, host, spec, plan.mode, options);
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
  sub->add_flag("--harness", options->harness,
                "With --policy: the command is the harness itself (claude), which writes the "
                "policy's tool_write entries (created when missing); its commands, in the same "
                "sandbox, can write them too");
  sub->add_flag("--prepared", options->prepared,
                "Launch through a sandbox prepared before the plugin's Spec is known, as a "
                "long-running host's SandboxPool does (checks that path on this host)");
  sub->add_option("--via", options->via,
                  "Launch through the launch service listening at this socket (serve's "
                  "[launcher]), from a sandbox it prepared; default: " +
                      std::string(kEnvLauncher) +
                      " when set (not with --config, --policy, --prepared)");
  sub->add_flag("--learn", options->learn,
                "Trace the plugin's file, exec and connect calls while it runs under its normal "
                "confinement, and print on stderr when it ended what its Spec refused and the "
                "config lines that would grant it (docs/why-denied.md); grants nothing itself. "
                "Not with --via, --policy or --prepared");
  sub->add_option("--learn-json", options->learn_json,
                  "With --learn: also write the report as JSON to this file")
      ->type_name("FILE")
      ->each([options](const std::string &) { options->learn = true; });
  add_launch_options(*sub, options->launch);
  return {sub, [options] { return run_plugin(*options); }};
}

}  // namespace sandbox_host::cli
