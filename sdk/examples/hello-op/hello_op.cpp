// hello: a broker operation written against the sandbox-host SDK alone, the starting point
// for your own. `sandbox-host ask hello --arg world` answers "<greeting>, world", where the
// operator sets the greeting in the config:
//
//   [ops]
//   enabled = ["hello"]
//
//   [ops.hello]
//   greeting = "hi"      # default "hello"
#include <sandbox_host/module.hpp>

#include <stdexcept>
#include <string>

namespace {

class HelloOp final : public sandbox_host::BrokerOp {
 public:
  // Settings are read once, when the host loads the module, so that a mistake in the
  // config stops the module from loading (and `sandbox-host modules` names the key)
  // instead of failing every request later.
  explicit HelloOp(const sandbox_host::HostInfo &host) : greeting_(read_greeting(host.config)) {}

  // The broker calls this from several threads at once. HelloOp keeps no state but the
  // greeting, which never changes after loading, so it needs no lock.
  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &,
              sandbox_host::Reply &reply) override {
    // Throwing refuses the request: the requester gets the message (and `ask` exits 126),
    // and the broker goes on serving. Start the message with the op's name, as the host does.
    if (request.args.empty()) {
      throw std::invalid_argument("hello: needs a name to greet (ask hello --arg NAME)");
    }
    if (!reply.streaming()) {
      // Not streaming: the broker collects everything and sends it when handle returns.
      reply.out(greeting_ + ", " + request.args.front());
      return;
    }
    // Streaming (`ask --stream`): each out() reaches the requester as it is written, so a
    // long operation shows progress. Stop early when nobody is listening any more.
    for (const auto &name : request.args) {
      if (reply.requester_gone()) return;
      reply.out(greeting_ + ", " + name + "\n");
    }
  }

 private:
  static std::string read_greeting(const sandbox_host::OpConfig &config) {
    // Refuse keys you do not know: a misspelt `greting` should be an error, not silently
    // the default.
    config.allow_only({"greeting"});
    std::string greeting = config.value("greeting").value_or("hello");
    if (greeting.empty()) throw config.error("greeting", "must not be empty");
    return greeting;
  }

  const std::string greeting_;
};

}  // namespace

// The name must match the file (op_hello.so) and the name the operator enables.
SANDBOX_HOST_BROKER_OP_MODULE(HelloOp, "hello", "0.2.0", "greets its arguments")
