#include "broker_config.hpp"

#include "schema_key.hpp"

#include <unistd.h>

#include <cstdlib>

namespace sandbox_host {
namespace fs = std::filesystem;
namespace {

void read_state_dir(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                    const ConfigKeyDoc &, BrokerConfig &broker) {
  std::string dir = r.string(node, dotted, "an absolute path");
  if (dir.empty() || dir.front() != '/') {
    r.fail(node.source(), dotted, "\"" + dir + "\" is not an absolute path");
  }
  broker.state_dir = dir;
}

void read_identity(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                   const ConfigKeyDoc &, BrokerConfig &broker) {
  std::string identity = r.string(node, dotted, "\"lock\" or \"scan\"");
  if (identity == "lock") {
    broker.identity = BrokerIdentity::lock;
  } else if (identity == "scan") {
    broker.identity = BrokerIdentity::scan;
  } else {
    r.fail(node.source(), dotted,
           "\"" + identity + "\" is not an identity; allowed: \"lock\", \"scan\"");
  }
}

constexpr SchemaKey<BrokerConfig> kBrokerKeys[] = {
    {{"state_dir", "absolute path", "", std::nullopt,
      "the broker's state directory, its spool below it; by default by uid, XDG_STATE_HOME and "
      "HOME"},
     &read_state_dir},
    integer_key<&BrokerConfig::tick>("tick_ms", "100", 10, 10000,
                                     "milliseconds between the broker's full scans of the spool"),
    integer_key<&BrokerConfig::max_request_bytes>("max_request_bytes", "131072", 256, 16777216,
                                                  "bytes of one request; a larger one is refused"),
    integer_key<&BrokerConfig::max_reply_bytes>("max_reply_bytes", "4194304", 4096, 268435456,
                                                "bytes of one reply that is not streamed"),
    integer_key<&BrokerConfig::max_concurrent>("max_concurrent", "64", 1, 4096,
                                               "requests answered side by side"),
    integer_key<&BrokerConfig::max_per_requester>(
        "max_per_requester", "64", 1, 4096, "one requester's requests taken and not answered"),
    integer_key<&BrokerConfig::max_queued>("max_queued", "256", 1, 65536,
                                           "requests waiting for a thread, of all requesters"),
    integer_key<&BrokerConfig::reply_timeout>(
        "reply_timeout_ms", "10000", 100, 600000,
        "milliseconds one reply frame waits for its requester to read it"),
    {{"identity", "string", "\"lock\"", std::nullopt,
      "how the broker tells which process asks: \"lock\" or \"scan\""},
     &read_identity},
};

}  // namespace

void read_broker(const ConfigReader &r, const toml::table &t, BrokerConfig &broker) {
  read_keys(r, t, "broker", kBrokerKeys, broker);
}

ConfigTableDoc broker_schema() {
  return {"broker", key_docs(kBrokerKeys)};
}

fs::path default_state_dir(uid_t uid, const char *xdg_state_home, const char *home) {
  if (uid == 0) return "/var/lib/sandbox-host";
  if (xdg_state_home != nullptr && xdg_state_home[0] == '/') {
    return fs::path(xdg_state_home) / "sandbox-host";
  }
  if (home != nullptr && home[0] == '/') return fs::path(home) / ".local/state/sandbox-host";
  return "/tmp/sandbox-host-" + std::to_string(uid);
}

fs::path default_state_dir() {
  return default_state_dir(geteuid(), std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
}

}  // namespace sandbox_host
