#include "broker_target.hpp"
#include "commands.hpp"

#include <sandbox_host/host/broker/client.hpp>
#include <sandbox_host/host/broker/spool.hpp>
#include <sandbox_host/host/config.hpp>

#include <unistd.h>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

namespace sandbox_host::cli {
namespace {

struct AskOptions {
  BrokerTarget broker;
  std::optional<std::string> input_file;
  Request request;
  int timeout_ms = 10000;
};

// The broker refused the request: apart from the operation's own exit codes and 125.
constexpr int kRefused = 126;

void write_out(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

int run_ask(AskOptions &options) {
  if (options.input_file) {
    std::ifstream in(*options.input_file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read input file " + *options.input_file);
    options.request.input.assign(std::istreambuf_iterator<char>(in), {});
  }
  broker::AskOptions ask;
  ask.timeout = std::chrono::milliseconds(options.timeout_ms);
  // Output goes out as it comes; with --stream that is while the operation runs.
  ask.on_output = [](std::string_view bytes, bool is_err) {
    write_out(is_err ? STDERR_FILENO : STDOUT_FILENO, bytes);
  };
  try {
    const broker::Answer answer = ask_broker(options.broker, options.request, ask);
    return answer.code;
  } catch (const broker::Refused &e) {
    std::cerr << "sandbox-host ask: refused: " << e.what() << "\n";
    return kRefused;
  } catch (const broker::NoBroker &e) {
    std::cerr << "sandbox-host ask: " << e.what() << "\n";
    return kHostFailure;
  }
}

}  // namespace

Command add_ask_command(CLI::App &app) {
  auto options = std::make_shared<AskOptions>();
  auto *sub = app.add_subcommand(
      "ask",
      "Ask the broker for an operation; exits with the operation's code, 126 when "
      "the broker refused, 125 when no broker answered");
  sub->add_option("op", options->request.op, "Operation (ping, secret, ...)")->required();
  sub->add_option("--arg", options->request.args, "An argument of the operation (repeatable)");
  sub->add_flag("--stream", options->request.stream,
                "Stream the output while the operation runs, and tie it to this process");
  sub->add_option("--input-file", options->input_file, "The operation's standard input");
  sub->add_option("--unit", options->request.unit, "Scope unit (scope)");
  sub->add_option("--slice", options->request.slice, "Slice (cap-slot, scope)");
  sub->add_option("--max", options->request.max, "Memory max (cap-slot, scope)");
  sub->add_option("--swap", options->request.swap, "Swap max (cap-slot, scope)");
  sub->add_option("--wait", options->request.wait, "How long a gated call waits (gate)");
  sub->add_option("--resource", options->request.resource, "Lab lease (kubeconfig, lab)");
  add_broker_options(*sub, options->broker);
  sub->add_option("--timeout", options->timeout_ms,
                  "Milliseconds to wait for a broker to take the request (default 10000)")
      ->check(CLI::Range(1, 3600000));
  return {sub, [options] { return run_ask(*options); }};
}

}  // namespace sandbox_host::cli
