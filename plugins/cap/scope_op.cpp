// scope (docs/design.md#broker-protocol): moves the requester, and only the requester, into a
// capped scope unit of a slot's slice; `sandbox-host sandbox scope ... -- CMD` asks for it and then
// becomes CMD, which so runs capped while staying in its sandbox. The process moved is the one the
// broker identified and pinned with a pidfd (Requester::pidfd): a request has no field that names a
// process.
//
//   sandbox-host sandbox scope --slice sandbox-slot1.slice --max 2G --swap 0
//                              --unit run-42.scope -- make -j8
#include "cap_op.hpp"

namespace {

class ScopeOp final : public sandbox_host::BrokerOp {
 public:
  explicit ScopeOp(const sandbox_host::HostInfo &host)
      : op_(host.config.op()), chosen_(sandbox_host::cap::make_driver(host.config)) {}

  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &requester,
              sandbox_host::Reply &) override {
    namespace cap = sandbox_host::cap;
    cap::refuse_unused_fields(op_, request, true);
    if (request.unit.empty()) {
      throw sandbox_host::refusal(op_, "unit is required: the scope to run in, <name>.scope");
    }
    cap::refusing(op_, [&] { cap::check_unit_name("unit", request.unit, ".scope"); });
    const cap::MemoryCap wanted = cap::requested_cap(op_, request, *chosen_.driver);
    cap::refusing(op_, [&] { chosen_.driver->enter_scope(wanted, request.unit, requester.pidfd); });
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

SANDBOX_HOST_BROKER_OP_MODULE(ScopeOp, "scope", "0.1.0",
                              "moves the requester into a capped scope of a slot's slice")
