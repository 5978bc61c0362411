// gate (docs/design.md#broker-protocol): runs a gated command on the host, where it reads its
// keychain and the gate starts its units.
#include <sandbox_host/command_op.hpp>
#include <sandbox_host/request_pattern.hpp>

#include <optional>
#include <string>
#include <vector>

namespace {

// How long a gated merge waits for its turn: a count and a unit, as the gate parses it.
constexpr const char *kWaitPattern = "^[0-9]{1,6}(ms|s|m|h)$";

// Reads wait_arg, the option that passes the request's wait to the command; without it the
// command takes none.
std::optional<std::string> wait_arg(const sandbox_host::OpConfig &config) {
  auto arg = config.value("wait_arg");
  if (arg && arg->empty()) throw config.error("wait_arg", "must not be empty");
  return arg;
}

std::vector<std::string> wait_args(const std::string &op, const std::optional<std::string> &arg,
                                   const sandbox_host::Request &request) {
  static const sandbox_host::RequestPattern wait(kWaitPattern);
  if (request.wait.empty()) return {};
  if (!arg) {
    throw sandbox_host::refusal(op, "takes no wait: ops." + op + ".wait_arg is not set");
  }
  if (!wait.matches(request.wait)) {
    throw sandbox_host::refusal(
        op, "wait " + sandbox_host::in_quotes(request.wait) + " does not match " + kWaitPattern);
  }
  return {*arg, request.wait};
}

// The wait is an option of the gate's own, so it goes before "--" and the gated command's
// arguments: Go's flag package, for one, stops reading options at the first operand.
sandbox_host::CommandBehaviour gate_behaviour(const sandbox_host::OpConfig &config) {
  return {.option_args = [op = config.op(),
                          arg = wait_arg(config)](const sandbox_host::Request &request) {
    return wait_args(op, arg, request);
  }};
}

class GateOp final : public sandbox_host::CommandOp {
 public:
  explicit GateOp(const sandbox_host::HostInfo &host)
      : CommandOp(sandbox_host::CommandRules::from(host.config, {}, "wait_arg"),
                  gate_behaviour(host.config)) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(GateOp, "gate", "0.1.0", "runs a gated command on the host")
