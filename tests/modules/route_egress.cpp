// An egress module that routes wherever its [egress.route] settings say, unchecked, and
// serves nothing: for the host's checks of what a module hands back.
#include <sandbox_host/module.hpp>

#include <stdexcept>
#include <string>

namespace {

class RouteEgress final : public sandbox_host::EgressModule {
 public:
  explicit RouteEgress(const sandbox_host::HostInfo &host)
      : socket_(host.config.value("socket").value_or("")),
        directory_(host.config.value("directory").value_or("")),
        port_(static_cast<std::uint16_t>(std::stoul(host.config.value("port").value_or("3128")))),
        fail_(host.config.value("fail").value_or("")) {}

  sandbox_host::EgressRoute route() const override {
    if (fail_ == "route") throw std::runtime_error("no route today");
    return {socket_, directory_, port_};
  }
  void start(sandbox_host::EgressSinks sinks) override {
    if (fail_ == "start") throw std::runtime_error("cannot listen");
    sinks.log("started");
  }
  void stop() noexcept override {}

 private:
  std::string socket_, directory_;
  std::uint16_t port_;
  std::string fail_;
};

}  // namespace

SANDBOX_HOST_EGRESS_MODULE(RouteEgress, "route", "0.0.1", "routes as configured, serves nothing")
