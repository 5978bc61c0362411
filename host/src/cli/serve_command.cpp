#include "commands.hpp"
#include "serve_metrics.hpp"

#include <sandbox_host/egress/proxy/egress_service.hpp>
#include <sandbox_host/host/broker/broker.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_service/launch_service.hpp>
#include <sandbox_host/host/own_children.hpp>
#include <sandbox_host/host/service/inherited_sockets.hpp>
#include <sandbox_host/host/service/progress_watchdog.hpp>
#include <sandbox_host/host/service/service_manager.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace sandbox_host::cli {
namespace {

struct ServeOptions {
  std::optional<std::string> config;
  std::vector<std::string> sockets;  // PATH or PATH=LABEL
  bool poll = false;
};

// The broker bounds what it holds (docs/broker.md), and those bounds assume more than the
// 1,024 descriptors of the usual soft limit: the soft limit goes up to the hard one, as Go's
// runtime does for every program. The broker polls; no select(2) limits it.
void raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// What the config and --socket expect inherited sockets to be, for a mismatch's message.
std::string expected_sockets(const Host &host, const ServeOptions &options) {
  std::string expected;
  for (const auto &socket : options.sockets) {
    expected += (expected.empty() ? "" : "; ") + std::string("\"broker\" at ") +
                socket.substr(0, socket.find('='));
  }
  if (host.config().launcher) {
    expected += (expected.empty() ? "" : "; ") + std::string("\"launcher\" at ") +
                host.config().launcher->socket.string();
  }
  return expected.empty() ? "none: no --socket and no [launcher]" : expected;
}

int run_serve(const ServeOptions &options) {
  // First, before any thread: the service manager's variables leave the environment here,
  // and its sockets become close-on-exec, so that no sandbox inherits either.
  const ServiceManager manager = ServiceManager::from_environment();
  InheritedSockets inherited = InheritedSockets::from_environment();
  raise_descriptor_limit();
  Host host(load_config_or_defaults(options.config));
  broker::Operations operations = broker::load_operations(host);
  auto settings = broker::BrokerOptions::from(host.config().broker);
  settings.watch = !options.poll;
  broker::Broker broker(settings, std::move(operations), host.audit());
  for (const auto &socket : options.sockets) {
    const auto equals = socket.find('=');
    const std::string path = socket.substr(0, equals);
    broker.listen(path, equals == std::string::npos ? std::string() : socket.substr(equals + 1),
                  inherited.take("broker", SOCK_SEQPACKET, path));
  }
  UniqueFd launcher_socket;
  if (host.config().launcher) {
    launcher_socket = inherited.take("launcher", SOCK_STREAM, host.config().launcher->socket);
  }
  inherited.require_all_taken(expected_sockets(host, options));

  // SIGINT and SIGTERM end the broker; a thread waits for them, so no handler races.
  sigset_t ending = ending_signals();
  pthread_sigmask(SIG_BLOCK, &ending, nullptr);
  std::unique_ptr<ServedMetrics> metrics = start_metrics(host);
  // The egress runs beside the broker when the operator enabled it.
  std::unique_ptr<RunningEgress> egress;
  if (host.config().egress) {
    egress = start_egress(host);
    std::cerr << "sandbox-host egress: " << egress->description() << std::endl;
  }
  // The launch service's stage 1 is sandbox-host's: this binary has no stage-1 hook, and
  // the broker's libraries stay out of every sandbox's start-up.
  std::unique_ptr<LaunchService> launcher;
  if (host.config().launcher) {
    host.use_stage1_program(sandbox_host_executable().string());
    launcher =
        std::make_unique<LaunchService>(host, *host.config().launcher, std::move(launcher_socket));
    if (metrics) metrics->watch(*launcher);
  }
  std::string status = "serving: broker on " + broker.spool().string();
  if (launcher) status += ", launcher on " + launcher->socket().string();
  if (egress) status += ", egress " + egress->description();
  // Set up before the loops start, so that a WatchdogSec= it refuses ends serve at once.
  LoopProgress broker_progress;
  LoopProgress launcher_progress;
  std::optional<ProgressWatchdog> watchdog;
  if (const auto interval = manager.watchdog_interval()) {
    std::vector<WatchedLoop> loops{{"the broker", &broker_progress}};
    if (launcher) loops.push_back({"the launch service", &launcher_progress});
    watchdog.emplace(manager, *interval, std::move(loops), status);
  }
  std::jthread serving([&](std::stop_token stop) { broker.serve(stop, &broker_progress); });
  // Whatever a plugin makes this process's child (clone(CLONE_PARENT) from a Landlock
  // plugin, whose parent serve is, where a backend's filter lets it) is reaped here.
  std::jthread reaping([](std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any tick;
    StrayReaper reaper;
    std::unique_lock lock(mutex);
    while (!tick.wait_for(lock, stop, std::chrono::seconds(1),
                          [&] { return stop.stop_requested(); })) {
      reaper.reap();
    }
  });
  std::jthread launching;
  if (launcher) {
    launching =
        std::jthread([&](std::stop_token stop) { launcher->serve(stop, &launcher_progress); });
    std::cerr << "sandbox-host serve: launcher on " << launcher->socket().string() << std::endl;
  }

  std::string names;
  for (const auto &name : host.config().ops_enabled) {
    if (host.operation(name)) names += (names.empty() ? "" : ", ") + name;
  }
  std::cerr << "sandbox-host serve: broker on " << broker.spool().string()
            << " (operations: " << (names.empty() ? "none" : names) << ")" << std::endl;
  // Ready: every socket listens (the launcher's acceptors take what waits in its backlog).
  manager.notify("READY=1\nSTATUS=" + status);
  int signal = 0;
  sigwait(&ending, &signal);
  manager.notify("STOPPING=1\nSTATUS=stopping on signal " + std::to_string(signal));
  watchdog.reset();
  std::string launches;
  if (launching.joinable()) {
    launching.request_stop();
    launching.join();
    launches = "; launched " + std::to_string(launcher->launched()) + ", refused " +
               std::to_string(launcher->refused()) + " launches";
  }
  metrics.reset();
  launcher.reset();
  serving.request_stop();
  serving.join();
  std::cerr << "sandbox-host serve: stopped by signal " << signal << "; answered "
            << broker.answered() << ", refused " << broker.refused() << launches << std::endl;
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App &app) {
  auto options = std::make_shared<ServeOptions>();
  auto *sub = app.add_subcommand(
      "serve", "Run the broker: answer the requests of sandboxed processes until SIGINT/SIGTERM");
  sub->add_option("--config", options->config, "Config file");
  sub->add_option("--socket", options->sockets,
                  "Also answer on a SOCK_SEQPACKET socket at PATH, for one sandbox "
                  "(PATH or PATH=LABEL; repeatable)");
  sub->add_flag("--poll", options->poll,
                "Find requests by scanning the spool every tick only, without inotify (the "
                "first design's polling; for comparison)");
  return {sub, [options] { return run_serve(*options); }};
}

}  // namespace sandbox_host::cli
