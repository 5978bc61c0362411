// agents (docs/design.md#broker-protocol): runs an agents start, wake or resume on the host, where
// the user's service manager starts the agent's unit.
#include <sandbox_host/command_op.hpp>

namespace {

class AgentsOp final : public sandbox_host::CommandOp {
 public:
  explicit AgentsOp(const sandbox_host::HostInfo &host)
      : CommandOp(host, {.defaults = {.subcommands = {"start", "wake", "resume"}}}) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(AgentsOp, "agents", "0.1.0",
                              "starts, wakes or resumes an agent on the host")
