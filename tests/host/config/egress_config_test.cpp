// The [egress] table: its defaults, every key, and the refusals, each named.
#include "config_error.hpp"
#include "fixtures.hpp"

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/egress.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

using test::TempFile;
using Strings = std::vector<std::string>;

// ---- [egress] ----------------------------------------------------------------------------

using std::chrono::seconds;

const std::string kEgressKeys =
    "implementation, listen, socket, allow, allow_addresses, inject, resolve, token_command, "
    "renew_every_s, "
    "renew_bound_s, renew_cold_bound_s, renew_backoff_s, upstream_ca_bundle, runtime_dir, "
    "same_user, log_connections, connect_timeout_s, head_timeout_s, idle_timeout_s, "
    "max_tunnels, ca_validity_days, leaf_validity_hours, parent";

TEST(EgressConfig, AbsentUnlessTheFileHasTheTable) {
  EXPECT_FALSE(default_config().egress.has_value());
  TempFile file("[broker]\ntick_ms = 100\n", "config.toml");
  EXPECT_FALSE(load_config(file.path()).egress.has_value());
}

TEST(EgressConfig, AnEmptyTableHasEveryDefault) {
  // broker.state_dir written after [egress]: the socket's default follows it all the same.
  TempFile file("[egress]\n[broker]\nstate_dir = \"/srv/sh\"\n", "config.toml");
  const Config config = load_config(file.path());
  ASSERT_TRUE(config.egress.has_value());
  const EgressConfig &egress = *config.egress;
  ASSERT_TRUE(egress.listen.has_value());
  EXPECT_EQ(egress.listen->address.to_string(), "127.0.0.1");
  EXPECT_EQ(egress.listen->port, 3128);
  EXPECT_EQ(egress.socket, "/srv/sh/egress.sock");
  EXPECT_TRUE(egress.allow.empty());
  EXPECT_TRUE(egress.allow_addresses.empty());
  EXPECT_TRUE(egress.inject.empty());
  EXPECT_TRUE(egress.resolve.empty());
  EXPECT_TRUE(egress.token_command.empty());
  EXPECT_EQ(egress.renew_every, seconds(300));
  EXPECT_EQ(egress.renew_bound, seconds(30));
  EXPECT_EQ(egress.renew_cold_bound, seconds(120));
  EXPECT_EQ(egress.renew_backoff, (std::vector<seconds>{seconds(5), seconds(15), seconds(60)}));
  EXPECT_TRUE(egress.upstream_ca_bundle.empty());
  EXPECT_TRUE(egress.runtime_dir.empty());
  EXPECT_TRUE(egress.same_user);
  EXPECT_FALSE(egress.log_connections);
  EXPECT_EQ(egress.connect_timeout, seconds(10));
  EXPECT_EQ(egress.head_timeout, seconds(10));
  EXPECT_EQ(egress.idle_timeout, seconds(300));
  EXPECT_EQ(egress.max_tunnels, 20000u);
  EXPECT_EQ(egress.ca_validity, std::chrono::days(30));
  EXPECT_EQ(egress.leaf_validity, std::chrono::hours(24));

  // Without broker.state_dir: under the default state directory.
  TempFile plain("[egress]\n", "config.toml");
  EXPECT_EQ(load_config(plain.path()).egress->socket, default_state_dir() / "egress.sock");
}

TEST(EgressConfig, EveryKeyLoads) {
  TempFile file(R"(
[egress]
listen = "[::1]:0"
socket = "/run/sh/egress.sock"
allow = ["github.com", "*.githubusercontent.com", "example.test:8443"]
allow_addresses = ["127.0.0.1", "10.0.0.0/8", "fd00::/8"]
inject = ["github.com", "Objects.GitHubUserContent.com."]
resolve = { "example.test" = ["127.0.0.1", "::1"], "git.test" = ["127.0.0.2"] }
token_command = ["/usr/local/bin/devctl", "token", "--raw"]
renew_every_s = 600
renew_bound_s = 20
renew_cold_bound_s = 90
renew_backoff_s = [1, 2]
upstream_ca_bundle = "/etc/test/ca.pem"
runtime_dir = "/run/user/1000"
same_user = false
log_connections = true
connect_timeout_s = 5
head_timeout_s = 7
idle_timeout_s = 60
max_tunnels = 10
ca_validity_days = 2
leaf_validity_hours = 48
)",
                "config.toml");
  const EgressConfig egress = *load_config(file.path()).egress;
  ASSERT_TRUE(egress.listen.has_value());
  EXPECT_EQ(egress.listen->address.to_string(), "::1");
  EXPECT_EQ(egress.listen->port, 0);
  EXPECT_EQ(egress.socket, "/run/sh/egress.sock");
  EXPECT_EQ(egress.allow, (Strings{"github.com", "*.githubusercontent.com", "example.test:8443"}));
  EXPECT_EQ(egress.allow_addresses, (Strings{"127.0.0.1", "10.0.0.0/8", "fd00::/8"}));
  EXPECT_EQ(egress.inject, (Strings{"github.com", "Objects.GitHubUserContent.com."}));
  EXPECT_EQ(egress.resolve, (std::map<std::string, Strings>{{"example.test", {"127.0.0.1", "::1"}},
                                                            {"git.test", {"127.0.0.2"}}}));
  EXPECT_EQ(egress.token_command, (Strings{"/usr/local/bin/devctl", "token", "--raw"}));
  EXPECT_EQ(egress.renew_every, seconds(600));
  EXPECT_EQ(egress.renew_bound, seconds(20));
  EXPECT_EQ(egress.renew_cold_bound, seconds(90));
  EXPECT_EQ(egress.renew_backoff, (std::vector<seconds>{seconds(1), seconds(2)}));
  EXPECT_EQ(egress.upstream_ca_bundle, "/etc/test/ca.pem");
  EXPECT_EQ(egress.runtime_dir, "/run/user/1000");
  EXPECT_FALSE(egress.same_user);
  EXPECT_TRUE(egress.log_connections);
  EXPECT_EQ(egress.connect_timeout, seconds(5));
  EXPECT_EQ(egress.head_timeout, seconds(7));
  EXPECT_EQ(egress.idle_timeout, seconds(60));
  EXPECT_EQ(egress.max_tunnels, 10u);
  EXPECT_EQ(egress.ca_validity, std::chrono::days(2));
  EXPECT_EQ(egress.leaf_validity, std::chrono::hours(48));

  // "" turns the TCP listener off; an empty backoff retries at the next renewal.
  TempFile off("[egress]\nlisten = \"\"\nrenew_backoff_s = []\n", "config.toml");
  const EgressConfig quiet = *load_config(off.path()).egress;
  EXPECT_FALSE(quiet.listen.has_value());
  EXPECT_TRUE(quiet.renew_backoff.empty());
}

TEST(EgressConfig, UnknownKeysAndWrongTypesAreNamed) {
  EXPECT_EQ(error_of("egress = 1\n"), ":1: egress: must be a table, not an integer");
  EXPECT_EQ(error_of("[egress]\nallow = []\nlisten_on = \"127.0.0.1:1\"\n"),
            ":3: egress.listen_on: unknown key; allowed: " + kEgressKeys);
  EXPECT_EQ(error_of("[egress]\nlisten = 3128\n"),
            ":2: egress.listen: must be a string (\"<loopback address>:<port>\", or \"\" for "
            "none), not an integer");
  EXPECT_EQ(error_of("[egress]\nallow = \"github.com\"\n"),
            ":2: egress.allow: must be an array of strings (host names or *.domain patterns), "
            "not a string");
  EXPECT_EQ(error_of("[egress]\nresolve = [\"127.0.0.1\"]\n"),
            ":2: egress.resolve: must be a table, not an array");
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = \"5\"\n"),
            ":2: egress.renew_backoff_s: must be an array of integers (1 to 86400), not a string");
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = [5, \"15\"]\n"),
            ":2: egress.renew_backoff_s[1]: must be an integer (1 to 86400), not a string");
  EXPECT_EQ(error_of("[egress]\nsame_user = \"yes\"\n"),
            ":2: egress.same_user: must be a boolean, not a string");
  EXPECT_EQ(error_of("[egress]\nlog_connections = 1\n"),
            ":2: egress.log_connections: must be a boolean, not an integer");
  EXPECT_EQ(error_of("[egress]\nmax_tunnels = 1.5\n"),
            ":2: egress.max_tunnels: must be an integer (1 to 1000000), not a float");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"/bin/gh\", 1]\n"),
            ":2: egress.token_command[1]: must be a string (an absolute path and its arguments), "
            "not an integer");
}

TEST(EgressConfig, ListenMustBeALoopbackAddressAndPort) {
  const std::string allowed =
      " is not a loopback address and port; allowed: \"127.0.0.1:3128\" (any address of "
      "127.0.0.0/8), \"[::1]:3128\", port 0 for any, or \"\" for none";
  for (const std::string bad :
       {"0.0.0.0:3128", "10.0.0.1:3128", "localhost:3128", "127.0.0.1", "127.0.0.1:", ":3128",
        "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:0x50", "127.1:3128", "::1:3128", "[::2]:3128",
        "[127.0.0.1]:3128", "128.0.0.1:3128"}) {
    EXPECT_EQ(error_of("[egress]\nlisten = \"" + bad + "\"\n"),
              ":2: egress.listen: \"" + bad + "\"" + allowed)
        << bad;
  }
  TempFile other("[egress]\nlisten = \"127.8.9.10:65535\"\n", "config.toml");
  const auto listen = load_config(other.path()).egress->listen;
  ASSERT_TRUE(listen.has_value());
  EXPECT_EQ(listen->address.to_string(), "127.8.9.10");
  EXPECT_EQ(listen->port, 65535);
}

TEST(EgressConfig, PathsMustBeAbsoluteAndTheSocketFitAnAddress) {
  EXPECT_EQ(error_of("[egress]\nsocket = \"egress.sock\"\n"),
            ":2: egress.socket: \"egress.sock\" is not an absolute path");
  EXPECT_EQ(error_of("[egress]\nsocket = \"\"\n"),
            ":2: egress.socket: \"\" is not an absolute path");
  const std::string long_path = "/" + std::string(107, 's');
  EXPECT_EQ(error_of("[egress]\nsocket = \"" + long_path + "\"\n"),
            ":2: egress.socket: \"" + long_path +
                "\" is longer than a unix socket address holds (107 bytes)");
  TempFile fits("[egress]\nsocket = \"/" + std::string(106, 's') + "\"\n", "config.toml");
  EXPECT_EQ(load_config(fits.path()).egress->socket.string().size(), 107u);
  // The default socket follows broker.state_dir, which may be too long for it.
  const std::string state_dir = "/" + std::string(100, 'd');
  EXPECT_EQ(error_of("[broker]\nstate_dir = \"" + state_dir + "\"\n\n[egress]\nallow = []\n"),
            ":4: egress.socket: the default \"" + state_dir +
                "/egress.sock\" (under broker.state_dir) is longer than a unix socket address "
                "holds (107 bytes); set egress.socket");
  EXPECT_EQ(error_of("[egress]\nupstream_ca_bundle = \"ca.pem\"\n"),
            ":2: egress.upstream_ca_bundle: \"ca.pem\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for the system's roots");
  EXPECT_EQ(error_of("[egress]\nruntime_dir = \"run/user/0\"\n"),
            ":2: egress.runtime_dir: \"run/user/0\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for $XDG_RUNTIME_DIR");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"devctl\", \"token\"]\n"),
            ":2: egress.token_command[0]: \"devctl\" is not an absolute path");
  EXPECT_EQ(error_of("[egress]\ntoken_command = [\"\"]\n"),
            ":2: egress.token_command[0]: \"\" is not an absolute path");
}

TEST(EgressConfig, HostsAddressesAndResolveEntriesAreChecked) {
  EXPECT_EQ(error_of("[egress]\nallow = [\n  \"github.com\",\n  \"\",\n]\n"),
            ":4: egress.allow[1]: is empty; allowed: host names or *.domain patterns");
  // The proxy's own parsers read each entry, and the error names it at its line.
  const std::vector<std::pair<std::string, std::string>> bad_blocks{
      {"10.0.0.0/33", "prefix length \"33\" is not a number from 0 to 32"},
      {"::1/129", "prefix length \"129\" is not a number from 0 to 128"},
      {"github.com", "\"github.com\" is not an IP address"},
      {"10.0.0.0/", "prefix length \"\" is not a number from 0 to 32"},
      {"127.0.0.1/-1", "prefix length \"-1\" is not a number from 0 to 32"},
      {"", "is empty"},
      {"fe80::1%eth0/64", "a zone id has no place in an address block"},
      // Accepted by the config's own check once, refused by the proxy at start-up.
      {"10.0.0.1/8", "has bits set past the prefix length; the block is 10.0.0.0/8"},
  };
  for (const auto &[bad, problem] : bad_blocks) {
    EXPECT_EQ(error_of("[egress]\nallow_addresses = [\n  \"127.0.0.1\",\n  \"" + bad + "\",\n]\n"),
              ":4: egress.allow_addresses[1]: \"" + bad + "\": " + problem)
        << bad;
  }
  const std::vector<std::pair<std::string, std::string>> bad_hosts{
      {"*", "\"*\" alone would allow every host; list them"},
      {"https://github.com", "is a URL; an entry is a host name or an IP address, with :ports"},
      {"foo.*.com",
       "a \"*\" stands only for the subdomains of a name, as the first label of "
       "\"*.example.com\""},
      {"*.127.0.0.1", "a \"*.\" entry covers the subdomains of a name, not an IP address"},
  };
  for (const auto &[bad, problem] : bad_hosts) {
    EXPECT_EQ(error_of("[egress]\nallow = [\"github.com\", \"" + bad + "\"]\n"),
              ":2: egress.allow[1]: \"" + bad + "\": " + problem)
        << bad;
  }
  EXPECT_TRUE(error_of("[egress]\nallow = [\"github.com:0\"]\n")
                  .starts_with(":2: egress.allow[0]: \"github.com:0\": "));
  const std::string long_label = std::string(64, 'a') + ".com";
  EXPECT_TRUE(error_of("[egress]\nallow = [\"" + long_label + "\"]\n")
                  .starts_with(":2: egress.allow[0]: \"" + long_label + "\": "));
  // What the proxy takes, the config takes: an IPv4 shorthand, an IDN name, a bracketed IPv6
  // literal with ports.
  TempFile taken(
      "[egress]\nallow_addresses = [\"10.0.0/8\"]\n"
      "allow = [\"b\u00fccher.example\", \"[::1]:8443\"]\n",
      "config.toml");
  EXPECT_EQ(load_config(taken.path()).egress->allow.size(), 2u);
  EXPECT_EQ(error_of("[egress]\nresolve = { \"example.test\" = [\"localhost\"] }\n"),
            ":2: egress.resolve.\"example.test\"[0]: \"localhost\" is not an IP address (like "
            "\"127.0.0.1\" or \"::1\")");
  EXPECT_EQ(error_of("[egress]\nresolve = { \"example.test\" = [] }\n"),
            ":2: egress.resolve.\"example.test\": names no address; allowed: one or more IP "
            "addresses");
  EXPECT_EQ(error_of("[egress]\nresolve = { \"\" = [\"127.0.0.1\"] }\n"),
            ":2: egress.resolve.\"\": is not a host name");
  EXPECT_EQ(
      error_of(
          "[egress]\nresolve = { \"Example.Test.\" = [\"::1\"], \"example.test\" = [\"::1\"] }\n"),
      ":2: egress.resolve.\"example.test\": names example.test, which an earlier key of "
      "egress.resolve names too");
  EXPECT_TRUE(error_of("[egress]\nresolve = { \"bad..name\" = [\"::1\"] }\n")
                  .starts_with(":2: egress.resolve.\"bad..name\": host name \"bad..name\" "));
  EXPECT_EQ(error_of("[egress.resolve]\n\"example.test\" = \"127.0.0.1\"\n"),
            ":2: egress.resolve.\"example.test\": must be an array of strings (IP addresses), not "
            "a string");
}

TEST(EgressConfig, InjectHostsAreNamedAndAllowed) {
  EXPECT_EQ(
      error_of("[egress]\nallow = [\"*.github.com\"]\ninject = [\"*.github.com\"]\n"),
      ":3: egress.inject[0]: \"*.github.com\" is a pattern; the token goes to named hosts only");
  EXPECT_EQ(error_of("[egress]\nallow = [\"github.com\"]\ninject = [\"api.github.com\"]\n"),
            ":3: egress.inject[0]: \"api.github.com\" is not allowed on port 443 by egress.allow "
            "(no entry for api.github.com); a host that gets the token must also be allowed");
  // *.domain allows subdomains only, never the apex.
  EXPECT_EQ(error_of("[egress]\nallow = [\"*.github.com\"]\ninject = [\"github.com\"]\n"),
            ":3: egress.inject[0]: \"github.com\" is not allowed on port 443 by egress.allow (no "
            "entry for github.com); a host that gets the token must also be allowed");
  // inject written before allow: checked once both are known.
  EXPECT_EQ(error_of("[egress]\ninject = [\"github.com\"]\n"),
            ":2: egress.inject[0]: \"github.com\" is not allowed on port 443 by egress.allow (no "
            "entry for github.com (the allow list is empty)); a host that gets the token must "
            "also be allowed");
  // The token goes to port 443, so an entry for another port does not let it through.
  EXPECT_EQ(error_of("[egress]\nallow = [\"x.test\", \"github.com:8443\"]\n"
                     "inject = [\n  \"x.test\",\n  \"github.com\",\n]\n"),
            ":5: egress.inject[1]: \"github.com\" is not allowed on port 443 by egress.allow (port "
            "443 is not allowed for github.com (entry github.com:8443 allows 8443)); a host that "
            "gets the token must also be allowed");
  EXPECT_EQ(error_of("[egress]\ninject = [\"\"]\nallow = []\n"),
            ":2: egress.inject[0]: is empty; allowed: host names");
  // Names compare case-insensitively and without a trailing dot; a port on the entry is
  // the proxy's business.
  TempFile file(
      "[egress]\ninject = [\"API.GitHub.com.\", \"github.com\", \"codeload.github.com\"]\n"
      "allow = [\"*.github.com\", \"GitHub.com:443\"]\n",
      "config.toml");
  EXPECT_EQ(load_config(file.path()).egress->inject.size(), 3u);
}

TEST(EgressConfig, TheParentProxyIsAnHttpUrlWithAPortAndOneCredentialSource) {
  TempFile file(
      "[egress.parent]\nurl = \"http://Proxy.Corp.Example:3128/\"\n"
      "credential_file = \"/etc/sandbox-host/parent.credential\"\n",
      "config.toml");
  const auto parent = load_config(file.path()).egress->parent;
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->host, "proxy.corp.example");
  EXPECT_EQ(parent->port, 3128);
  EXPECT_EQ(parent->credential_file, "/etc/sandbox-host/parent.credential");
  TempFile v6(
      "[egress.parent]\nurl = \"http://[fd00::1]:8080\"\n"
      "credential_command = [\"/usr/bin/proxy-credential\", \"--user\"]\n",
      "config.toml");
  const auto literal = *load_config(v6.path()).egress->parent;
  EXPECT_EQ(literal.host, "fd00::1");
  EXPECT_EQ(literal.port, 8080);
  EXPECT_EQ(literal.credential_command.size(), 2u);

  const std::string prefix = ":2: egress.parent.url: \"";
  const std::vector<std::pair<std::string, std::string>> bad_urls{
      {"https://proxy:3128", "\" is https; the parent is spoken to in plain HTTP"},
      {"socks5://proxy:1080", "\" is not an http:// URL"},
      {"http://user:pw@proxy:3128",
       "\" holds credentials, which would show wherever the config "
       "is shown"},
      {"http://proxy", "\" names no port"},
      {"http://proxy:0", "\" has port \"0\"; allowed: 1 to 65535"},
      {"http://proxy:70000", "\" has port \"70000\"; allowed: 1 to 65535"},
      {"http://proxy:3128/path", "\" has a path, query or fragment"},
      {"http://[fd00::1:3128", "\" has a \"[\" without \"]\""},
      {"http://[proxy]:3128", "\" has no IPv6 address between \"[\" and \"]\""},
      {"http://bad..name:3128", "\" has no host the proxy can dial: host name \"bad..name\""},
  };
  for (const auto &[url, problem] : bad_urls) {
    const std::string error = error_of("[egress.parent]\nurl = \"" + url + "\"\n");
    EXPECT_TRUE(error.starts_with(prefix + url + problem)) << url << ": " << error;
  }
  EXPECT_EQ(error_of("[egress.parent]\ncredential_file = \"/c\"\n"),
            ":1: egress.parent.url: is missing; the parent proxy is \"http://<host>:<port>\"");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_file = \"/c\"\n"
                     "credential_command = [\"/bin/c\"]\n"),
            ":4: egress.parent.credential_command: and egress.parent.credential_file are both "
            "set; the credential comes from one");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_command = [\"c\"]\n"),
            ":3: egress.parent.credential_command[0]: \"c\" is not an absolute path");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\ncredential_file = \"c\"\n"),
            ":3: egress.parent.credential_file: \"c\" is not an absolute path; allowed: an "
            "absolute path, or \"\" for none");
  EXPECT_EQ(error_of("[egress.parent]\nurl = \"http://p:1\"\nuser = \"u\"\n"),
            ":3: egress.parent.user: unknown key; allowed: url, credential_file, "
            "credential_command");
  EXPECT_EQ(error_of("[egress]\nparent = \"http://p:1\"\n"),
            ":2: egress.parent: must be a table, not a string");
}

TEST(EgressConfig, NumbersOutOfRangeNameTheRange) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases{
      {"renew_every_s", "9", "10 to 86400"},      {"renew_every_s", "86401", "10 to 86400"},
      {"renew_bound_s", "0", "1 to 3600"},        {"renew_cold_bound_s", "3601", "1 to 3600"},
      {"connect_timeout_s", "0", "1 to 600"},     {"head_timeout_s", "601", "1 to 600"},
      {"idle_timeout_s", "86401", "1 to 86400"},  {"max_tunnels", "0", "1 to 1000000"},
      {"max_tunnels", "1000001", "1 to 1000000"}, {"ca_validity_days", "0", "1 to 3650"},
      {"ca_validity_days", "3651", "1 to 3650"},  {"leaf_validity_hours", "8761", "1 to 8760"},
      {"leaf_validity_hours", "-1", "1 to 8760"},
  };
  for (const auto &[key, value, range] : cases) {
    EXPECT_EQ(error_of("[egress]\n" + key + " = " + value + "\n"),
              ":2: egress." + key + ": " + value + " is out of range; allowed: " + range);
  }
  EXPECT_EQ(error_of("[egress]\nrenew_backoff_s = [5, 0]\n"),
            ":2: egress.renew_backoff_s[1]: 0 is out of range; allowed: 1 to 86400");
}

TEST(EgressConfig, ALeafNeverOutlivesItsCa) {
  EXPECT_EQ(error_of("[egress]\nleaf_validity_hours = 25\nca_validity_days = 1\n"),
            ":2: egress.leaf_validity_hours: 25 hours is longer than the CA's validity "
            "(egress.ca_validity_days = 1, 24 hours); a leaf must not outlive its CA");
  TempFile file("[egress]\nleaf_validity_hours = 24\nca_validity_days = 1\n", "config.toml");
  EXPECT_EQ(load_config(file.path()).egress->leaf_validity, std::chrono::hours(24));
}

TEST(EgressConfig, AProxiedPluginNeedsTheTable) {
  EXPECT_EQ(error_of("[plugins.git]\nnetwork = \"proxied\"\n"),
            ":2: plugins.git.network: \"proxied\" goes through the egress proxy, and the file has "
            "no [egress] table to configure it");
  TempFile file("[plugins.git]\nnetwork = \"proxied\"\n[egress]\n", "config.toml");
  EXPECT_EQ(load_config(file.path()).plugin("git").network, Network::proxied);
}

TEST(EgressConfig, TheSandboxPortIsListensElse3128) {
  EgressConfig egress;
  EXPECT_EQ(egress.sandbox_port(), 3128);
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:8080");
  EXPECT_EQ(egress.sandbox_port(), 8080);
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:0");  // any port on the host's side
  EXPECT_EQ(egress.sandbox_port(), 3128);
  egress.listen.reset();
  EXPECT_EQ(egress.sandbox_port(), 3128);
}

TEST(EgressConfig, TheEgressDirIsUnderTheRuntimeDir) {
  EgressConfig egress;
  EXPECT_EQ(egress_dir(egress, "/run/user/1000"), "/run/user/1000/clawpatrol-sandbox/egress");
  EXPECT_EQ(egress_dir(egress, nullptr), "");
  EXPECT_EQ(egress_dir(egress, "run/user/1000"), "");
  EXPECT_EQ(egress_dir(egress, ""), "");
  egress.runtime_dir = "/srv/runtime";
  EXPECT_EQ(egress_dir(egress, "/run/user/1000"), "/srv/runtime/clawpatrol-sandbox/egress");
  EXPECT_EQ(egress_dir(egress, nullptr), "/srv/runtime/clawpatrol-sandbox/egress");
  test::ScopedEnv runtime("XDG_RUNTIME_DIR", "/run/user/42");
  EXPECT_EQ(egress_dir(EgressConfig{}), "/run/user/42/clawpatrol-sandbox/egress");
}

TEST(EgressConfig, TheImplementationIsTheBuiltInProxyUnlessAModuleIsNamed) {
  TempFile builtin("[egress]\nimplementation = \"proxy\"\nallow = [\"github.com\"]\n",
                   "config.toml");
  const Config proxy = load_config(builtin.path());
  ASSERT_TRUE(proxy.egress);
  EXPECT_TRUE(proxy.egress->builtin());
  EXPECT_EQ(proxy.egress->allow, std::vector<std::string>{"github.com"});
  EXPECT_TRUE(proxy.egress->module_settings.empty());

  TempFile module(
      "[egress]\nimplementation = \"connect\"\n\n[egress.connect]\n"
      "socket = \"/run/connect.sock\"\nallow = [\"a.test:443\", \"b.test:80\"]\nport = 8080\n",
      "config.toml");
  const Config connect = load_config(module.path());
  ASSERT_TRUE(connect.egress);
  EXPECT_FALSE(connect.egress->builtin());
  EXPECT_EQ(connect.egress->implementation, "connect");
  const std::vector<std::pair<std::string, std::vector<std::string>>> settings{
      {"socket", {"/run/connect.sock"}},
      {"allow", {"a.test:443", "b.test:80"}},
      {"port", {"8080"}}};
  EXPECT_EQ(connect.egress->module_settings, settings);
  // The built-in's socket default is not made up for a module, which chooses its own.
  EXPECT_TRUE(connect.egress->socket.empty());
}

TEST(EgressConfig, AModuleTakesNoKeyOfTheBuiltInProxy) {
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\nallow = [\"github.com\"]\n"),
            ":3: egress.allow: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  // Whatever their order in the file.
  EXPECT_EQ(error_of("[egress]\nlisten = \"\"\nimplementation = \"connect\"\n"),
            ":2: egress.listen: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\n[egress.other]\nx = 1\n"),
            ":3: egress.other: is not read with implementation = \"connect\": the egress module "
            "connect takes its settings from [egress.connect], and this key is the built-in "
            "proxy's (implementation = \"proxy\")");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\n[egress.connect]\n"
                     "requester_env = [\"HOME\"]\n"),
            ":4: egress.connect.requester_env: is a key of an operation's table; this module has "
            "no requester whose variables it could take");
  EXPECT_EQ(
      error_of("[egress]\nimplementation = \"connect\"\n[egress.connect]\nAllow = 1\n"),
      ":4: egress.connect.Allow: \"Allow\" is not a key of an operation; allowed: a-z, 0-9, _ "
      "and -");
  EXPECT_EQ(error_of("[egress]\nimplementation = \"connect\"\nconnect = 1\n"),
            ":3: egress.connect: must be a table, not an integer");
}

TEST(EgressConfig, TheImplementationIsAModuleName) {
  EXPECT_EQ(error_of("[egress]\nimplementation = \"../evil\"\n"),
            ":2: egress.implementation: \"../evil\" is not a module name; allowed: \"proxy\" "
            "(the built-in proxy) or an egress module's name (a-z, 0-9 and -)");
  EXPECT_EQ(error_of("[egress]\nimplementation = 1\n"),
            ":2: egress.implementation: must be a string (\"proxy\" (the built-in proxy) or an "
            "egress module's name), not an integer");
  // With the built-in proxy, a table named like a module is an unknown key.
  EXPECT_EQ(error_of("[egress]\n[egress.connect]\nsocket = \"/x\"\n"),
            ":2: egress.connect: unknown key; allowed: " + kEgressKeys);
}

TEST(EgressConfig, TheBuiltInProxysRouteFillsTheSpec) {
  // The socket's directory reached through a symlink: the Spec holds where it really is.
  TempFile place("", "unused");
  std::filesystem::create_directory(place.dir() / "real");
  std::filesystem::create_directory_symlink(place.dir() / "real", place.dir() / "link");
  EgressConfig egress;
  egress.socket = place.dir() / "link/egress.sock";
  egress.listen = egress::LoopbackEndpoint::parse("127.0.0.1:8888");
  egress.runtime_dir = place.dir() / "link";
  Registry registry({});
  AuditSink audit;
  Spec spec;
  spec.network = Network::proxied;
  route_spec(spec, make_egress(egress, registry, audit)->route());
  EXPECT_EQ(spec.proxy_socket, (place.dir() / "real/egress.sock").string());
  EXPECT_EQ(spec.proxy_port, 8888);
  EXPECT_EQ(spec.egress_dir, (place.dir() / "real/clawpatrol-sandbox/egress").string());

  // No runtime directory: no egress directory.
  egress.runtime_dir.clear();
  test::ScopedEnv runtime("XDG_RUNTIME_DIR", std::nullopt);
  route_spec(spec, make_egress(egress, registry, audit)->route());
  EXPECT_EQ(spec.egress_dir, "");
}

}  // namespace
}  // namespace sandbox_host
