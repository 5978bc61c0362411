#include "commands.hpp"

#include <sandbox_host/egress/proxy/egress_service.hpp>
#include <sandbox_host/egress/proxy/token_command.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <signal.h>

#include <iostream>
#include <memory>

namespace sandbox_host::cli {
namespace {

struct EgressCommandOptions {
  std::optional<std::string> config;
};

int run_egress(const EgressCommandOptions &options) {
  Host host(load_config_or_defaults(options.config));
  if (!host.config().egress) {
    std::cerr << "sandbox-host egress: the config has no [egress] table; there is no egress "
                 "to serve (docs/egress.md)\n";
    return kHostFailure;
  }
  sigset_t ending = ending_signals();
  pthread_sigmask(SIG_BLOCK, &ending, nullptr);
  const auto running = start_egress(host);
  std::cerr << "sandbox-host egress: " << running->description() << std::endl;
  int signal = 0;
  sigwait(&ending, &signal);
  std::cerr << "sandbox-host egress: stopped by signal " << signal << std::endl;
  return 0;
}

}  // namespace

sigset_t ending_signals() {
  sigset_t ending;
  sigemptyset(&ending);
  sigaddset(&ending, SIGINT);
  sigaddset(&ending, SIGTERM);
  sigaddset(&ending, SIGHUP);
  return ending;
}

std::filesystem::path sandbox_host_executable() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / SANDBOX_HOST_EXE_RELATIVE_PATH).lexically_normal();
}

void egress_log(const std::string &line) {
  // A line names a client's target host and carries the token command's own words.
  std::cerr << "sandbox-host egress: " << escape_text(line) << std::endl;
}

std::unique_ptr<RunningEgress> start_egress(const Host &host) {
  // The built-in proxy reads the operator's token commands the way the broker runs a host
  // command; the proxy itself does not link the broker.
  const auto builtin_proxy = [](const EgressConfig &config, const EgressServing &serving) {
    return egress::start_builtin_proxy(config, serving, &egress::command_token_reader);
  };
  return host.egress()->start({host.audit(), sandbox_host_executable(), egress_log, builtin_proxy});
}

Command add_egress_command(CLI::App &app) {
  auto options = std::make_shared<EgressCommandOptions>();
  auto *sub = app.add_subcommand(
      "egress", "Run the egress proxy alone (the [egress] table) until SIGINT/SIGTERM");
  sub->add_option("--config", options->config, "Config file");
  return {sub, [options] { return run_egress(*options); }};
}

}  // namespace sandbox_host::cli
