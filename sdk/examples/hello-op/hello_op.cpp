// hello: a broker operation written against the sandbox-host SDK alone.
// It answers "hello, <first arg>" and refuses a request that carries no argument.
#include <sandbox_host/module.hpp>

#include <stdexcept>

namespace {

class HelloOp final : public sandbox_host::BrokerOp {
 public:
  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    // A thrown exception refuses the request; its message reaches the requester.
    if (request.args.empty()) throw std::invalid_argument("hello: needs one argument");
    reply.out("hello, " + request.args.front());
  }
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(HelloOp, "hello", "0.1.0", "greets its first argument")
