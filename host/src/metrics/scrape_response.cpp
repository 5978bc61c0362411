#include <sandbox_host/egress/proxy/http_exchange.hpp>
#include <sandbox_host/host/metrics/scrape_response.hpp>

namespace sandbox_host::metrics {
namespace {

std::string response(int status, std::string_view content_type, std::string_view extra_headers,
                     std::string_view body, bool with_body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + egress::reason_phrase(status) +
                    "\r\nContent-Type: " + std::string(content_type) +
                    "\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n" + std::string(extra_headers) + "\r\n";
  if (with_body) out += body;
  return out;
}

}  // namespace

std::string error_response(int status, std::string_view reason) {
  return egress::proxy_response(status, "sandbox-host metrics: " + std::string(reason));
}

ScrapeAnswer scrape_response(const egress::RequestParse &parsed,
                             const std::function<std::string()> &exposition) {
  auto error = [](int status, std::string_view reason) {
    return ScrapeAnswer{status, error_response(status, reason)};
  };
  if (parsed.state != egress::ParseState::complete) {
    return error(parsed.error.status, parsed.error.reason);
  }
  const egress::HttpRequestHead &head = parsed.head;
  if (head.method != "GET" && head.method != "HEAD") {
    return {405,
            response(405, "text/plain; charset=utf-8", "Allow: GET, HEAD\r\n",
                     "sandbox-host metrics: only GET and HEAD of /metrics are served\n", true)};
  }
  if (head.form != egress::HttpRequestHead::Form::origin) {
    return error(400, "send an origin-form request: GET /metrics");
  }
  // Prometheus adds no query; one is ignored, as the exposition takes no parameters.
  const std::string_view path =
      std::string_view(head.origin_target).substr(0, head.origin_target.find('?'));
  if (path != "/metrics") {
    return error(404, "only /metrics is served");
  }
  if (head.framing != egress::BodyFraming::none) {
    return error(400, "a scrape has no body");
  }
  return {200, response(200, "text/plain; version=0.0.4; charset=utf-8", "", exposition(),
                        head.method == "GET")};
}

}  // namespace sandbox_host::metrics
