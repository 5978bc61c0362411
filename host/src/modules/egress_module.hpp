// An egress module (sh_egress_v1) behind the core's Egress interface.
#pragma once

#include <sandbox_host/host/egress.hpp>
#include <sandbox_host/host/module.hpp>

#include <atomic>
#include <memory>
#include <string>

namespace sandbox_host {

class ModuleEgress final : public Egress {
 public:
  explicit ModuleEgress(std::shared_ptr<const LoadedModule> module);

  // The module's route, checked: an absolute socket path a unix socket address holds, an
  // absolute directory or none, a port of 1 to 65535.
  EgressRoute route() const override;
  // Again only once the last start's result is destroyed: the ABI never starts a running
  // instance.
  std::unique_ptr<RunningEgress> start(const EgressServing &serving) const override;

 private:
  std::shared_ptr<const LoadedModule> module_;
  const sh_egress_v1 *table_;
  std::shared_ptr<std::atomic<bool>> serving_;  // true while a start's result lives
};

}  // namespace sandbox_host
