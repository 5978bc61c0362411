// secret (docs/design.md#broker-protocol): runs the operator's secret command on the host, where
// its tools reach their keys, and answers its output and exit code.
#include <sandbox_host/command_op.hpp>

namespace {

class SecretOp final : public sandbox_host::CommandOp {
 public:
  // The two variables tell the command that the broker runs it for a sandboxed session:
  // it holds its files to the policy's lists and asks no broker itself. The request's first
  // argument is the secret command's own subcommand (`secret get NAME`), which a "--"
  // before it would hide from a parser that looks for subcommands; a leading "-" is
  // refused all the same.
  explicit SecretOp(const sandbox_host::HostInfo &host)
      : CommandOp(host, {.defaults = {.end_of_options = false},
                         .env = {"CLAWPATROL_SANDBOX_BROKERED=1", "CLAWPATROL_SANDBOX=1"}}) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(SecretOp, "secret", "0.1.0",
                              "runs a secret call on the host and answers its output")
