// lab (docs/design.md#broker-protocol): creates or tears down a held lab's cluster on the host,
// where the cluster tool reaches the container runtime.
#include <sandbox_host/command_op.hpp>
#include <sandbox_host/request_pattern.hpp>

#include <string>
#include <vector>

namespace {

// A lab lease's name: a DNS label with dots, as cluster names take them.
constexpr const char *kResourcePattern = "^[a-z0-9][a-z0-9.-]{0,62}$";

std::vector<std::string> lab_resource(const std::string &op, const sandbox_host::Request &request) {
  static const sandbox_host::RequestPattern resource(kResourcePattern);
  if (request.resource.empty()) {
    throw sandbox_host::refusal(op, "a resource is required: the lab lease's name");
  }
  if (!resource.matches(request.resource)) {
    throw sandbox_host::refusal(op, "resource " + sandbox_host::in_quotes(request.resource) +
                                        " does not match " + kResourcePattern);
  }
  return {request.resource};
}

class LabOp final : public sandbox_host::CommandOp {
 public:
  explicit LabOp(const sandbox_host::HostInfo &host)
      : CommandOp(host, {.defaults = {.subcommands = {"create", "delete"}},
                         .extra_args = [op = host.config.op()](const sandbox_host::Request &r) {
                           return lab_resource(op, r);
                         }}) {}
};

}  // namespace

SANDBOX_HOST_BROKER_OP_MODULE(LabOp, "lab", "0.1.0", "creates or tears down a held lab's cluster")
