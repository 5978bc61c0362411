// socks_proxy: the proxied sandbox's SOCKS5 proxy from its environment, in the scheme
// kubectl's proxy-url takes, and the environments that name none.
#include "kubeconfig_proxy.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sandbox_host::kubeconfig {
namespace {

Getenv environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const std::string &name) {
    const auto found = variables.find(name);
    return found == variables.end() ? std::string() : found->second;
  };
}

std::string refusal_of(std::map<std::string, std::string> variables) {
  try {
    return "took it: " + socks_proxy(environment(std::move(variables)));
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
}

TEST(SocksProxy, IsTheProxiedSandboxsProxyInKubectlsScheme) {
  // As backends/namespaces/proxied_network.cpp sets it.
  EXPECT_EQ(socks_proxy(environment({{"ALL_PROXY", "socks5h://127.0.0.1:41080"},
                                     {"all_proxy", "socks5h://127.0.0.1:41080"},
                                     {"HTTPS_PROXY", "http://127.0.0.1:41080"}})),
            "socks5://127.0.0.1:41080");
}

TEST(SocksProxy, TakesAllProxyBeforeItsLowercaseTwin) {
  EXPECT_EQ(socks_proxy(environment(
                {{"ALL_PROXY", "socks5h://127.0.0.1:1"}, {"all_proxy", "socks5h://127.0.0.1:2"}})),
            "socks5://127.0.0.1:1");
  EXPECT_EQ(socks_proxy(environment({{"all_proxy", "socks5h://127.0.0.1:2"}})),
            "socks5://127.0.0.1:2");
}

TEST(SocksProxy, WritesTheLoopbackAddressCanonically) {
  EXPECT_EQ(socks_proxy(environment({{"ALL_PROXY", "SOCKS5H://127.1:1080/"}})),
            "socks5://127.0.0.1:1080");
  EXPECT_EQ(socks_proxy(environment({{"ALL_PROXY", "socks5://[0::1]:1080"}})),
            "socks5://[::1]:1080");
  EXPECT_EQ(socks_proxy(environment({{"ALL_PROXY", "socks5h://localhost:1080"}})),
            "socks5://localhost:1080");
}

TEST(SocksProxy, RefusesAnEnvironmentWithoutOne) {
  EXPECT_EQ(refusal_of({}),
            "no SOCKS5 proxy: neither ALL_PROXY nor all_proxy is set, as a sandbox of network "
            "\"proxied\" sets them (socks5h://127.0.0.1:<port>)");
  EXPECT_EQ(refusal_of({{"HTTPS_PROXY", "http://127.0.0.1:3128"}, {"ALL_PROXY", ""}}),
            refusal_of({}));
}

TEST(SocksProxy, RefusesWhatIsNoSandboxsSocksProxy) {
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "http://127.0.0.1:3128"}}),
            "ALL_PROXY (\"http://127.0.0.1:3128\") is no SOCKS5 proxy URL (socks5h://host:port "
            "or socks5://)");
  EXPECT_EQ(refusal_of({{"all_proxy", "127.0.0.1:1080"}}),
            "all_proxy (\"127.0.0.1:1080\") is no SOCKS5 proxy URL (socks5h://host:port or "
            "socks5://)");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://127.0.0.1"}}),
            "ALL_PROXY (\"socks5h://127.0.0.1\") has no port from 1 to 65535");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://127.0.0.1:0"}}),
            "ALL_PROXY (\"socks5h://127.0.0.1:0\") has no port from 1 to 65535");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://127.0.0.1:65536"}}),
            "ALL_PROXY (\"socks5h://127.0.0.1:65536\") has no port from 1 to 65535");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://:1080"}}),
            "ALL_PROXY (\"socks5h://:1080\") has no host");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://user:secret@127.0.0.1:1080"}}),
            "ALL_PROXY names a user; the sandbox's proxy takes none");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://127.0.0.1:1080/path"}}),
            "ALL_PROXY (\"socks5h://127.0.0.1:1080/path\") has a path; a SOCKS5 proxy URL is "
            "host:port");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://proxy.example:1080"}}),
            "ALL_PROXY (\"socks5h://proxy.example:1080\") is not on loopback, so it is no "
            "proxied sandbox's SOCKS5 proxy (that is 127.0.0.1:<port> in the sandbox)");
  EXPECT_EQ(refusal_of({{"ALL_PROXY", "socks5h://10.0.0.1:1080\n"}}),
            "ALL_PROXY (\"socks5h://10.0.0.1:1080\\x0a\") has no port from 1 to 65535");
}

}  // namespace
}  // namespace sandbox_host::kubeconfig
