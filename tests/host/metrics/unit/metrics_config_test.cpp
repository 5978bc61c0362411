#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

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
            "request_timeout_ms, scrapers");
  EXPECT_EQ(error_of("\n[metrics]\nlisten = \"\"\n"),
            ":2: metrics: listen is \"\" and no socket is set, so the endpoint would serve "
            "nowhere; set listen to a loopback address or socket to a path, or remove the table");
  EXPECT_EQ(error_of("metrics = true\n"), ":1: metrics: must be a table, not a boolean");
}

// nobody's uid, which every Debian and Fedora system has.
uid_t nobody() {
  const passwd *entry = ::getpwnam("nobody");
  if (entry == nullptr) throw std::runtime_error("no user nobody on this system");
  return entry->pw_uid;
}

TEST(MetricsConfig, ScrapersAreUserNamesOrUidsResolvedAtLoad) {
  EXPECT_TRUE(load("[metrics]\n").metrics->scrapers.empty());
  EXPECT_EQ(load("[metrics]\nscrapers = [\"nobody\"]\n").metrics->scrapers,
            std::vector<uid_t>{nobody()});
  EXPECT_EQ(load("[metrics]\nscrapers = [4242, \"4343\"]\n").metrics->scrapers,
            (std::vector<uid_t>{4242, 4343}));
}

TEST(MetricsConfig, ScraperErrorsNameTheEntry) {
  const std::string own = std::to_string(::geteuid());
  const std::string nobody_uid = std::to_string(nobody());
  EXPECT_EQ(error_of("[metrics]\nscrapers = \"nobody\"\n"),
            ":2: metrics.scrapers: must be an array of user names, or uids 0 to 4294967294, not "
            "a string");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [\"nobody\", \"no-such-user-here\"]\n"),
            ":2: metrics.scrapers[1]: \"no-such-user-here\" is no user in the password database "
            "(getpwnam_r); name an existing user or give its uid");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [\"\"]\n"),
            ":2: metrics.scrapers[0]: \"\" is no user in the password database (getpwnam_r); "
            "name an existing user or give its uid");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [-1]\n"),
            ":2: metrics.scrapers[0]: -1 is not a uid; allowed: user names, or uids 0 to "
            "4294967294");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [4294967295]\n"),
            ":2: metrics.scrapers[0]: 4294967295 is not a uid; allowed: user names, or uids 0 "
            "to 4294967294");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [\"99999999999\"]\n"),
            ":2: metrics.scrapers[0]: \"99999999999\" is not a uid; allowed: user names, or "
            "uids 0 to 4294967294");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [1.5]\n"),
            ":2: metrics.scrapers[0]: must be a user name (a string) or a uid (an integer), not a "
            "float");
  EXPECT_EQ(
      error_of("[metrics]\nscrapers = [\"nobody\",\n  " + nobody_uid + "]\n"),
      ":3: metrics.scrapers[1]: uid " + nobody_uid + " is listed already, as metrics.scrapers[0]");
  EXPECT_EQ(error_of("[metrics]\nscrapers = [" + own + "]\n"),
            ":2: metrics.scrapers[0]: uid " + own +
                " is serve's own user, which is served without listing it");
}

// Root listed for a serve that is not root: loaded by a child that runs as nobody.
TEST(MetricsConfig, RootIsRefusedWhenServeIsNotRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to load the config as another user";
  TempFile file("[metrics]\nscrapers = [\"root\"]\n", "config.toml");
  ASSERT_EQ(::chmod(file.path().c_str(), 0644), 0);
  ASSERT_EQ(::chmod(file.path().parent_path().c_str(), 0755), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const uid_t as = nobody();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    std::string message = "loaded";
    if (::setresgid(as, as, as) != 0 || ::setresuid(as, as, as) != 0) {
      message = "setresuid failed";
    } else {
      try {
        load_config(file.path());
      } catch (const ConfigError &e) {
        message = std::string(e.what()).substr(file.path().string().size());
      }
    }
    (void)!::write(pipe_fds[1], message.data(), message.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[512];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) message.append(buffer, n);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(message,
            ":2: metrics.scrapers[0]: uid 0 (root) may scrape only a serve that runs "
            "as root: this serve, as uid " +
                std::to_string(as) +
                ", cannot read a root process's sandbox mark, and root's processes "
                "include the sandboxes of any host that runs as root");
}

}  // namespace
}  // namespace sandbox_host
