// ping (docs/design.md#broker-protocol): answers whether a broker runs.
#include <sandbox_host/module.hpp>

namespace {

class PingOp final : public sandbox_host::BrokerOp {
 public:
  void handle(const sandbox_host::Request &, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    reply.out("pong");
  }
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(PingOp, "ping", "0.1.0", "answers whether a broker runs")
