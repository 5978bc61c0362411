// [metrics] scrapers against a real `sandbox-host serve`: a process of a listed other user
// is served on the loopback port and on the unix socket, with serve as root (nobody listed)
// and as nobody (a second unprivileged uid, 4242, listed: it needs no password entry when
// listed by number); an unlisted user is refused, with an audit record naming its uid and
// the key that would let it scrape.
#include "metrics_service.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sandbox_host::test {
namespace {

constexpr unsigned kScraper = 4242;   // the listed second user of a serve run as nobody
constexpr unsigned kUnlisted = 4343;  // a user no case lists

std::vector<std::string> as_uid(unsigned uid, std::vector<std::string> argv) {
  std::vector<std::string> full{"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                "--regid=" + std::to_string(uid), "--clear-groups", "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return full;
}

// curl of the endpoint as uid: over TCP, or over the unix socket when socket is set.
ProcessResult scrape_as(const MetricsService &served, unsigned uid, bool socket) {
  std::vector<std::string> argv{"/usr/bin/curl", "-sS", "--max-time", "10"};
  if (socket) argv.insert(argv.end(), {"--unix-socket", served.metrics_socket().string()});
  argv.push_back(served.url());
  return run_process(as_uid(uid, argv));
}

class ListedScraper : public ::testing::TestWithParam<User> {};

// The listed user of each case: nobody for a root serve, 4242 for a serve run as nobody.
unsigned listed(User serve) {
  return serve == User::root ? kNobody : kScraper;
}

TEST_P(ListedScraper, IsServedOnThePortAndTheSocket) {
  const MetricsService served(GetParam(), GetParam() == User::root
                                              ? "scrapers = [\"nobody\"]\n"
                                              : "scrapers = [" + std::to_string(kScraper) + "]\n");
  for (const bool socket : {false, true}) {
    const ProcessResult result = scrape_as(served, listed(GetParam()), socket);
    EXPECT_EQ(result.code, 0) << (socket ? "socket: " : "port: ") << result.err;
    EXPECT_NE(result.out.find("sandbox_host_"), std::string::npos)
        << (socket ? "socket: " : "port: ") << result.out.substr(0, 300);
  }
  if (HasFailure()) ADD_FAILURE() << served.service().audit().substr(0, 3000);
  // serve's own user is still served beside it.
  EXPECT_NE(served.scrape().find("sandbox_host_"), std::string::npos);
}

TEST_P(ListedScraper, AnUnlistedUserIsRefusedAndAudited) {
  const MetricsService served(GetParam(), "scrapers = [" + std::to_string(kScraper) + "]\n");
  for (const bool socket : {false, true}) {
    const ProcessResult result = scrape_as(served, kUnlisted, socket);
    EXPECT_EQ(result.out, "") << (socket ? "socket" : "port");
  }
  const std::string audit = served.service().audit();
  const std::string why = "add uid " + std::to_string(kUnlisted) + " to metrics.scrapers";
  std::size_t named = 0;
  for (std::size_t at = audit.find(why); at != std::string::npos; at = audit.find(why, at + 1)) {
    ++named;
  }
  EXPECT_EQ(named, 2u) << audit.substr(0, 3000);
  EXPECT_NE(audit.find("\"rule\":\"metrics-peer\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Users, ListedScraper, ::testing::Values(User::root, User::nobody),
                         [](const auto &info) { return user_name(info.param); });

}  // namespace
}  // namespace sandbox_host::test
