#include <sandbox_host/host/metrics/scrape_response.hpp>

#include <gtest/gtest.h>

#include <string>

namespace sandbox_host::metrics {
namespace {

// The response, after checking that the status it was answered with is the one it says.
std::string answer(const std::string &request) {
  const ScrapeAnswer answered = scrape_response(egress::parse_request_head(request, kScrapeLimits),
                                                [] { return std::string("up 1\n"); });
  EXPECT_TRUE(answered.response.starts_with("HTTP/1.1 " + std::to_string(answered.status) + " "))
      << answered.response.substr(0, 40);
  return answered.response;
}

TEST(ScrapeResponse, GetOfMetricsIsTheExposition) {
  const std::string response = answer("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n")) << response;
  EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(response.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos);
  EXPECT_TRUE(response.ends_with("\r\n\r\nup 1\n")) << response;
}

TEST(ScrapeResponse, HeadHasTheLengthButNoBody) {
  const std::string response = answer("HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(response.starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_NE(response.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_TRUE(response.ends_with("\r\n\r\n")) << response;
}

TEST(ScrapeResponse, AQueryIsIgnored) {
  EXPECT_TRUE(answer("GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n").starts_with("HTTP/1.1 200"));
}

TEST(ScrapeResponse, EverythingElseGetsAClearError) {
  const std::string post = answer("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
  EXPECT_TRUE(post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << post;
  EXPECT_NE(post.find("Allow: GET, HEAD\r\n"), std::string::npos);
  EXPECT_NE(post.find("only GET and HEAD of /metrics are served"), std::string::npos);

  const std::string other = answer("GET /debug HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(other.starts_with("HTTP/1.1 404 Not Found\r\n")) << other;
  EXPECT_TRUE(other.ends_with("sandbox-host metrics: only /metrics is served\n"));

  const std::string proxy = answer("GET http://h/metrics HTTP/1.1\r\nHost: h\r\n\r\n");
  EXPECT_TRUE(proxy.starts_with("HTTP/1.1 400 Bad Request\r\n")) << proxy;

  const std::string body =
      answer("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_TRUE(body.starts_with("HTTP/1.1 400 Bad Request\r\n")) << body;
  EXPECT_NE(body.find("a scrape has no body"), std::string::npos);

  const std::string garbage = answer("\x16\x03\x01 hello\r\n\r\n");
  EXPECT_TRUE(garbage.starts_with("HTTP/1.1 400 Bad Request\r\n")) << garbage;
}

TEST(ScrapeResponse, AnOversizedHeadIsRefusedWithoutBeingRead) {
  const std::string head = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " +
                           std::string(kScrapeLimits.max_head_bytes, 'a') + "\r\n\r\n";
  const std::string response = answer(head);
  EXPECT_TRUE(response.starts_with("HTTP/1.1 431")) << response.substr(0, 80);
  const std::string long_target =
      answer("GET /" + std::string(kScrapeLimits.max_target_bytes + 1, 'm') + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(long_target.starts_with("HTTP/1.1 414")) << long_target.substr(0, 80);
}

}  // namespace
}  // namespace sandbox_host::metrics
