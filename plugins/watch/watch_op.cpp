// watch (docs/design.md#broker-protocol): runs the watch command on the host, where it reads the
// installations through the person's kubeconfig, streamed for as long as its requester runs.
#include <sandbox_host/command_op.hpp>

#include <chrono>

namespace {

class WatchOp final : public sandbox_host::CommandOp {
 public:
  // No timeout by default: the host ends the command when its requester goes.
  explicit WatchOp(const sandbox_host::HostInfo &host)
      : CommandOp(host,
                  {.defaults = {.timeout = std::chrono::milliseconds(0)}, .streams_only = true}) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(WatchOp, "watch", "0.1.0",
                              "streams a watch command on the host while its requester runs")
