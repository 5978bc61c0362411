// The egress the config chooses, and the built-in proxy's side of the interface that a
// launch needs: its route, read from [egress] alone.
#include "egress_module.hpp"

#include <sandbox_host/host/egress.hpp>

#include <stdexcept>

namespace sandbox_host {
namespace fs = std::filesystem;
namespace {

class BuiltinProxy final : public Egress {
 public:
  explicit BuiltinProxy(const EgressConfig &config) : config_(config) {}

  // Symlinks resolved as far as each path exists: the sandbox binds them by these names.
  EgressRoute route() const override {
    const fs::path dir = egress_dir(config_);
    return {fs::weakly_canonical(config_.socket).string(),
            dir.empty() ? std::string() : fs::weakly_canonical(dir).string(),
            config_.sandbox_port()};
  }

  std::unique_ptr<RunningEgress> start(const EgressServing &serving) const override {
    if (!serving.builtin_proxy) {
      throw std::logic_error(
          "the built-in egress proxy runs in sandbox-host-broker only "
          "(sandbox-host egress and serve hand over to it)");
    }
    return serving.builtin_proxy(config_, serving);
  }

 private:
  EgressConfig config_;
};

}  // namespace

void route_spec(Spec &spec, const EgressRoute &route) {
  spec.proxy_socket = route.socket;
  spec.proxy_port = route.port;
  spec.egress_dir = route.directory;
}

std::unique_ptr<Egress> make_egress(const EgressConfig &config, Registry &registry,
                                    AuditSink &audit) {
  if (config.builtin()) return std::make_unique<BuiltinProxy>(config);
  auto module = registry.acquire(ModuleKind::egress, config.implementation, audit);
  if (!module) {
    throw std::runtime_error("[egress] implementation = \"" + config.implementation +
                             "\": the egress module does not load: " +
                             registry.failure(ModuleKind::egress, config.implementation));
  }
  return std::make_unique<ModuleEgress>(std::move(module));
}

}  // namespace sandbox_host
