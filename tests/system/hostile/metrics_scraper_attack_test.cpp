// A hostile plugin against a root serve whose [metrics] lists nobody in scrapers: sandboxed
// (Landlock or namespaces, network outbound, the socket's directory granted) as the listed
// user, or as serve's own user, it gets no byte of the exposition on the loopback port or
// the unix socket, since a root serve reads the mark of every holder of the peer's socket;
// the same binary run unsandboxed as the listed user is served.
#include <gtest/gtest.h>

#include "backend_case.hpp"
#include "fixtures.hpp"
#include "metrics_service.hpp"
#include "process.hpp"

#include <string>
#include <vector>

namespace sandbox_host {
namespace {
using test::MetricsService;
using test::ProcessResult;

// The sandbox's user: nobody (the listed scraper) or root (serve's own).
std::vector<std::string> as_case_user(const test::BackendCase &c, std::vector<std::string> argv) {
  std::vector<std::string> full =
      c.user == test::BackendCase::User::nobody ? test::as_nobody() : std::vector<std::string>{};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

class SandboxedListedScraper : public ::testing::TestWithParam<test::BackendCase> {};

TEST_P(SandboxedListedScraper, GetsNothingOnThePortOrTheSocket) {
  const MetricsService served(test::User::root, "scrapers = [\"nobody\"]\n");
  const std::string sandbox_host = served.service().install().sandbox_host();
  const std::string backend = GetParam().backend;
  auto sandboxed = [&](std::vector<std::string> plugin_args) {
    std::vector<std::string> argv{
        sandbox_host, "run",      "--backend", backend,
        "--network",  "outbound", "--read",    served.metrics_socket().parent_path().string(),
        "--"};
    argv.insert(argv.end(), plugin_args.begin(), plugin_args.end());
    return as_case_user(GetParam(), argv);
  };
  if (test::run_process(sandboxed({"/bin/true"})).code != 0) {
    GTEST_SKIP() << "backend " << backend << " does not work here";
  }
  const std::string plugin = served.service().install().add_binary(HOSTILE_PLUGIN);
  for (const std::string &address : {served.tcp_address(), served.unix_address()}) {
    const ProcessResult attack = test::run_process(sandboxed({plugin, "scrape", address, "3"}));
    ASSERT_EQ(attack.code, 0) << attack.err;
    EXPECT_EQ(attack.out, "scrape: 0 answered, 0 bytes\n") << address << ": " << attack.err;
    // Unsandboxed, the listed user (or serve's own) is served.
    const ProcessResult plain =
        test::run_process(as_case_user(GetParam(), {plugin, "scrape", address, "2"}));
    EXPECT_TRUE(plain.out.starts_with("scrape: 2 answered")) << address << ": " << plain.out;
  }
  // Every holder found is read: each refusal names the sandbox.
  const std::string audit = served.service().audit();
  std::size_t sandboxed_refusals = 0;
  const std::string rule = "\"rule\":\"metrics-sandboxed-peer\"";
  for (std::size_t at = audit.find(rule); at != std::string::npos; at = audit.find(rule, at + 1)) {
    ++sandboxed_refusals;
  }
  EXPECT_EQ(sandboxed_refusals, 6u) << audit.substr(0, 3000);
}

INSTANTIATE_TEST_SUITE_P(Backends, SandboxedListedScraper,
                         ::testing::ValuesIn(test::kLinuxBackendCases), test::backend_case_name);

}  // namespace
}  // namespace sandbox_host
