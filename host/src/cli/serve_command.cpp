#include "commands.hpp"
#include "serve_metrics.hpp"

#include <sandbox_host/host/broker/broker.hpp>
#include <sandbox_host/host/egress/egress_service.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launcher/launch_service.hpp>
#include <sandbox_host/host/own_children.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
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

int run_serve(const ServeOptions &options) {
  raise_descriptor_limit();
  Host host(load_config_or_defaults(options.config));
  broker::Operations operations = broker::load_operations(host);
  auto settings = broker::BrokerOptions::from(host.config().broker);
  settings.watch = !options.poll;
  broker::Broker broker(settings, std::move(operations), host.audit());
  for (const auto &socket : options.sockets) {
    const auto equals = socket.find('=');
    broker.listen(socket.substr(0, equals),
                  equals == std::string::npos ? std::string() : socket.substr(equals + 1));
  }

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
    launcher = std::make_unique<LaunchService>(host, *host.config().launcher);
    if (metrics) metrics->watch(*launcher);
  }
  std::jthread serving([&](std::stop_token stop) { broker.serve(stop); });
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
    launching = std::jthread([&](std::stop_token stop) { launcher->serve(stop); });
    std::cerr << "sandbox-host serve: launcher on " << launcher->socket().string() << std::endl;
  }

  std::string names;
  for (const auto &name : host.config().ops_enabled) {
    if (host.operation(name)) names += (names.empty() ? "" : ", ") + name;
  }
  std::cerr << "sandbox-host serve: broker on " << broker.spool().string()
            << " (operations: " << (names.empty() ? "none" : names) << ")" << std::endl;
  int signal = 0;
  sigwait(&ending, &signal);
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
                "seed's design; for comparison)");
  return {sub, [options] { return run_serve(*options); }};
}

}  // namespace sandbox_host::cli
