#include "metrics_config.hpp"

#include "egress_config.hpp"
#include "metrics_scrapers.hpp"

#include <unistd.h>

namespace sandbox_host {

void read_metrics(const ConfigReader &r, const toml::table &t, MetricsConfig &metrics) {
  metrics.listen = egress::LoopbackEndpoint::parse("127.0.0.1:9464");
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    const std::string dotted = "metrics." + name;
    if (name == "listen") {
      metrics.listen = read_loopback_listen(r, node, dotted, 9464);
    } else if (name == "socket") {
      metrics.socket = r.socket_path(node, dotted);
    } else if (name == "max_connections") {
      metrics.max_connections = static_cast<unsigned>(r.integer(node, dotted, 1, 256));
    } else if (name == "request_timeout_ms") {
      metrics.request_timeout = std::chrono::milliseconds(r.integer(node, dotted, 100, 60000));
    } else if (name == "scrapers") {
      metrics.scrapers = read_scrapers(r, node, dotted, ::geteuid());
    } else {
      r.unknown(key, dotted, "listen, socket, max_connections, request_timeout_ms, scrapers");
    }
  }
  if (!metrics.listen && metrics.socket.empty()) {
    r.fail(t.source(), "metrics",
           "listen is \"\" and no socket is set, so the endpoint would serve nowhere; set "
           "listen to a loopback address or socket to a path, or remove the table");
  }
}

}  // namespace sandbox_host
