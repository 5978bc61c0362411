#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sandbox_host {
namespace {

using test::TempFile;

Config load(const std::string &toml) {
  TempFile file(toml, "config.toml");
  return load_config(file.path());
}

// The error a config file gets after its path, or "" when it loads.
std::string error_of(const std::string &toml) {
  TempFile file(toml, "config.toml");
  try {
    load_config(file.path());
  } catch (const ConfigError &e) {
    const std::string message = e.what();
    return message.substr(file.path().string().size());
  }
  return "";
}

TEST(MetricsConfig, NoTableNoEndpoint) {
  EXPECT_FALSE(load("[launcher]\n").metrics.has_value());
  EXPECT_FALSE(default_config().metrics.has_value());
}

TEST(MetricsConfig, AnEmptyTableServesOnTheLoopbackDefaultPort) {
  const Config config = load("[metrics]\n");
  ASSERT_TRUE(config.metrics.has_value());
  ASSERT_TRUE(config.metrics->listen.has_value());
  EXPECT_EQ(config.metrics->listen->to_string(), "127.0.0.1:9464");
  EXPECT_TRUE(config.metrics->socket.empty());
  EXPECT_EQ(config.metrics->max_connections, 8u);
  EXPECT_EQ(config.metrics->request_timeout.count(), 5000);
}

TEST(MetricsConfig, EveryKeyIsRead) {
  const Config config = load(
      "[metrics]\nlisten = \"[::1]:0\"\nsocket = \"/run/sh/metrics.sock\"\n"
      "max_connections = 3\nrequest_timeout_ms = 250\n");
  ASSERT_TRUE(config.metrics->listen.has_value());
  EXPECT_EQ(config.metrics->listen->to_string(), "[::1]:0");
  EXPECT_EQ(config.metrics->socket, "/run/sh/metrics.sock");
  EXPECT_EQ(config.metrics->max_connections, 3u);
  EXPECT_EQ(config.metrics->request_timeout.count(), 250);
}

TEST(MetricsConfig, TheSocketAloneTurnsTCPOff) {
  const Config config = load("[metrics]\nlisten = \"\"\nsocket = \"/run/sh/metrics.sock\"\n");
  EXPECT_FALSE(config.metrics->listen.has_value());
  EXPECT_EQ(config.metrics->socket, "/run/sh/metrics.sock");
}

TEST(MetricsConfig, ErrorsNameTheKeyAndWhatWasWrong) {
  EXPECT_EQ(error_of("[metrics]\nlisten = \"0.0.0.0:9464\"\n"),
            ":2: metrics.listen: \"0.0.0.0:9464\" is not a loopback address and port; allowed: "
            "\"127.0.0.1:9464\" (any address of 127.0.0.0/8), \"[::1]:9464\", port 0 for any, "
            "or \"\" for none");
  EXPECT_EQ(error_of("[metrics]\nlisten = 9464\n"),
            ":2: metrics.listen: must be a string (\"<loopback address>:<port>\", or \"\" for "
            "none), not an integer");
  EXPECT_EQ(error_of("[metrics]\nsocket = \"metrics.sock\"\n"),
            ":2: metrics.socket: \"metrics.sock\" is not an absolute path");
  EXPECT_EQ(error_of("[metrics]\nsocket = \"/" + std::string(120, 'm') + "\"\n"),
            ":2: metrics.socket: \"/" + std::string(120, 'm') +
                "\" is longer than a unix socket address holds (107 bytes)");
  EXPECT_EQ(error_of("[metrics]\nmax_connections = 0\n"),
            ":2: metrics.max_connections: 0 is out of range; allowed: 1 to 256");
  EXPECT_EQ(error_of("[metrics]\nrequest_timeout_ms = 60001\n"),
            ":2: metrics.request_timeout_ms: 60001 is out of range; allowed: 100 to 60000");
  EXPECT_EQ(error_of("[metrics]\nport = 9464\n"),
            ":2: metrics.port: unknown key; allowed: listen, socket, max_connections, "
            "request_timeout_ms");
  EXPECT_EQ(error_of("\n[metrics]\nlisten = \"\"\n"),
            ":2: metrics: listen is \"\" and no socket is set, so the endpoint would serve "
            "nowhere; set listen to a loopback address or socket to a path, or remove the table");
  EXPECT_EQ(error_of("metrics = true\n"), ":1: metrics: must be a table, not a boolean");
}

}  // namespace
}  // namespace sandbox_host
