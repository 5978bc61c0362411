// whoami: an operation for the broker's tests. It answers what the broker told it about its
// requester, one "key=value" line each, and misbehaves on request:
//   args ["throw"]        throws a std::runtime_error from its own code
//   args ["throw-other"]  throws something that is no std::exception
//   args ["fail", N]      writes to err and sets the code N
//   args ["stream", N]    streams N lines, 50 ms apart, or until its requester is gone
//   args ["big", N]       answers N bytes of "x", in frames of 16 KiB
#include <sandbox_host/module.hpp>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

class WhoamiOp final : public sandbox_host::BrokerOp {
 public:
  void handle(const sandbox_host::Request &request, const sandbox_host::Requester &who,
              sandbox_host::Reply &reply) override {
    const std::string first = request.args.empty() ? "" : request.args.front();
    if (first == "throw") throw std::runtime_error("whoami: asked to throw");
    if (first == "throw-other") throw 42;
    if (first == "fail") {
      reply.err("whoami: failing as asked\n");
      reply.code(std::stoi(request.args.at(1)));
      return;
    }
    if (first == "big") {
      reply.out(std::string(std::stoul(request.args.at(1)), 'x'));
      return;
    }
    if (first == "stream") {
      const int lines = std::stoi(request.args.at(1));
      for (int i = 0; i < lines && !reply.requester_gone(); ++i) {
        reply.out("line " + std::to_string(i) + "\n");
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      reply.out(reply.requester_gone() ? "gone\n" : "done\n");
      return;
    }
    reply.out("pid=" + std::to_string(who.pid) + "\n");
    reply.out("pidfd=" + std::string(who.pidfd >= 0 ? "yes" : "no") + "\n");
    reply.out("uid=" + std::to_string(who.uid) + "\n");
    reply.out("cwd=" + who.cwd + "\n");
    reply.out("sandboxed=" + std::string(who.sandboxed ? "yes" : "no") + "\n");
    reply.out("streaming=" + std::string(reply.streaming() ? "yes" : "no") + "\n");
    for (const auto &entry : who.env) reply.out("env " + entry + "\n");
  }
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(WhoamiOp, "whoami", "0.1.0", "answers who asked (tests only)")
