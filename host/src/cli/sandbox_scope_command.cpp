// `sandbox-host sandbox scope [--slice S --max M --swap W --unit U] -- CMD ARGS...`: asks the
// broker to move this very process into a capped scope unit of the slot's slice (the scope op),
// then becomes CMD, which so runs capped and still inside its sandbox. The broker moves the process
// that holds the request, which is this one, and exec keeps it: CMD is that process. A refusal, or
// no broker, ends the command without running CMD, so a run that asked for a cap never runs
// uncapped.
#include "broker_target.hpp"
#include "commands.hpp"

#include <sandbox_host/host/broker/client.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/config.hpp>

#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <system_error>

namespace sandbox_host::cli {
namespace {

struct ScopeOptions {
  BrokerTarget broker;
  Request request;
  int timeout_ms = 10000;
  std::vector<std::string> command;
};

// As `ask` exits when the broker refused; 127 when CMD cannot be run, as a shell does.
constexpr int kRefused = 126;
constexpr int kCannotRun = 127;

// "run-<16 hex digits>.scope": a unit of its own for a run that named none.
std::string fresh_unit() {
  unsigned char bytes[8];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    throw std::system_error(errno, std::generic_category(), "getrandom");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string unit = "run-";
  for (unsigned char b : bytes) {
    unit += kHex[b >> 4];
    unit += kHex[b & 0xf];
  }
  return unit + ".scope";
}

int run_scope(ScopeOptions &options) {
  options.request.op = "scope";
  if (options.request.unit.empty()) options.request.unit = fresh_unit();
  broker::AskOptions ask;
  ask.timeout = std::chrono::milliseconds(options.timeout_ms);
  // CMD's stdout is its own: whatever the broker says goes to stderr.
  ask.on_output = [](std::string_view bytes, bool) { std::cerr << bytes; };
  try {
    const broker::Answer answer = ask_broker(options.broker, options.request, ask);
    if (answer.code != 0) {
      std::cerr << "sandbox-host sandbox scope: the scope op answered code " << answer.code
                << "; not running " << options.command.front() << "\n";
      return kRefused;
    }
  } catch (const broker::Refused &e) {
    std::cerr << "sandbox-host sandbox scope: refused: " << e.what() << "\n";
    return kRefused;
  } catch (const broker::NoBroker &e) {
    std::cerr << "sandbox-host sandbox scope: " << e.what() << "\n";
    return kHostFailure;
  }
  std::vector<char *> argv;
  for (auto &arg : options.command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  ::execvp(argv.front(), argv.data());
  std::cerr << "sandbox-host sandbox scope: cannot run " << options.command.front() << ": "
            << std::strerror(errno) << "\n";
  return kCannotRun;
}

}  // namespace

Command add_sandbox_scope_command(CLI::App &sandbox) {
  auto options = std::make_shared<ScopeOptions>();
  auto *sub = sandbox.add_subcommand(
      "scope",
      "Ask the broker to move this process into a capped scope of a slot's slice, then run "
      "CMD there; exits 126 when refused, 125 when no broker answered, without running CMD");
  sub->add_option("--slice", options->request.slice, "The slot's slice (<name>.slice)");
  sub->add_option("--max", options->request.max, "Memory max (bytes, K, M, G, T or infinity)");
  sub->add_option("--swap", options->request.swap, "Swap max (bytes, K, M, G, T or infinity)");
  sub->add_option("--unit", options->request.unit,
                  "The scope unit (<name>.scope; default: run-<random>.scope)");
  add_broker_options(*sub, options->broker);
  sub->add_option("--timeout", options->timeout_ms,
                  "Milliseconds to wait for a broker to take the request (default 10000)")
      ->check(CLI::Range(1, 3600000));
  sub->add_option("command", options->command, "CMD ARGS...: what runs in the scope, after --")
      ->required();
  return {sub, [options] { return run_scope(*options); }};
}

}  // namespace sandbox_host::cli
