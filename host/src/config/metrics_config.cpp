#include "metrics_config.hpp"

#include "egress_config.hpp"
#include "metrics_scrapers.hpp"
#include "schema_key.hpp"

#include <unistd.h>

namespace sandbox_host {
namespace {

void read_listen(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, MetricsConfig &metrics) {
  metrics.listen = read_loopback_listen(r, node, dotted, 9464);
}

void read_socket(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                 const ConfigKeyDoc &, MetricsConfig &metrics) {
  metrics.socket = r.socket_path(node, dotted);
}

void read_scrapers_key(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                       const ConfigKeyDoc &, MetricsConfig &metrics) {
  metrics.scrapers = read_scrapers(r, node, dotted, ::geteuid());
}

constexpr SchemaKey<MetricsConfig> kMetricsKeys[] = {
    {{"listen", "string", "\"127.0.0.1:9464\"", std::nullopt,
      "loopback address and port to serve on, or \"\" for none"},
     &read_listen},
    {{"socket", "absolute path", "", std::nullopt, "a unix socket to serve on as well"},
     &read_socket},
    integer_key<&MetricsConfig::max_connections>("max_connections", "8", 1, 256,
                                                 "connections served at once"),
    integer_key<&MetricsConfig::request_timeout>(
        "request_timeout_ms", "5000", 100, 60000,
        "milliseconds a client may take to send its request and read the answer"),
    {{"scrapers", "array of users", "[]", std::nullopt,
      "user names or uids besides serve's own that may scrape"},
     &read_scrapers_key},
};

}  // namespace

void read_metrics(const ConfigReader &r, const toml::table &t, MetricsConfig &metrics) {
  metrics.listen = egress::LoopbackEndpoint::parse("127.0.0.1:9464");
  read_keys(r, t, "metrics", kMetricsKeys, metrics);
  if (!metrics.listen && metrics.socket.empty()) {
    r.fail(t.source(), "metrics",
           "listen is \"\" and no socket is set, so the endpoint would serve nowhere; set "
           "listen to a loopback address or socket to a path, or remove the table");
  }
}

ConfigTableDoc metrics_schema() {
  return {"metrics", key_docs(kMetricsKeys)};
}

}  // namespace sandbox_host
