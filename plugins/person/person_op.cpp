// person (docs/design.md#broker-protocol): runs the person command on the host, where the person's
// own gh login reads the org's roster.
#include <sandbox_host/command_op.hpp>

namespace {

class PersonOp final : public sandbox_host::CommandOp {
 public:
  explicit PersonOp(const sandbox_host::HostInfo &host) : CommandOp(host, {}) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(PersonOp, "person", "0.1.0",
                              "runs the person command on the host with the person's login")
