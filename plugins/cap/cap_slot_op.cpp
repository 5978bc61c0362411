// cap-slot (docs/design.md#broker-protocol): caps a build slot's slice. A sandboxed session cannot
// reach the service manager or the cgroup tree, so the broker sets the slice's memory max
// and swap max for it, through the driver the operator's [ops.cap-slot] chose.
//
//   sandbox-host ask cap-slot --slice sandbox-slot1.slice --max 2G --swap 0
#include "cap_op.hpp"

namespace {

class CapSlotOp final : public sandbox_host::BrokerOp {
 public:
  explicit CapSlotOp(const sandbox_host::HostInfo &host)
      : op_(host.config.op()), chosen_(sandbox_host::cap::make_driver(host.config)) {}

  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    namespace cap = sandbox_host::cap;
    cap::refuse_unused_fields(op_, request, false);
    const cap::MemoryCap wanted = cap::requested_cap(op_, request, *chosen_.driver);
    cap::refusing(op_, [&] { chosen_.driver->cap_slice(wanted); });
    reply.out("capped " + wanted.slice + ": max " + cap::to_string(wanted.max) + ", swap " +
              cap::to_string(wanted.swap) + " (" + chosen_.driver->describe() + ")\n");
  }

  std::vector<std::pair<std::string, std::string>> report() const override {
    return sandbox_host::cap::driver_report(chosen_);
  }

 private:
  const std::string op_;
  // Set up once; each driver guards what concurrent requests share.
  const sandbox_host::cap::ChosenDriver chosen_;
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(CapSlotOp, "cap-slot", "0.1.0", "caps a build slot's slice")
