// A broker op that registers the name "ping" from a file named for another module.
#include <sandbox_host/module.hpp>

namespace {

class Misnamed final : public sandbox_host::BrokerOp {
 public:
  void handle(const sandbox_host::Request &, const sandbox_host::Requester &,
              sandbox_host::Reply &) override {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(Misnamed, "ping", "0.0.1", "registers a name its file does not")
