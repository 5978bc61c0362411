// What the metrics endpoint answers a client: GET or HEAD of /metrics gets the exposition;
// anything else a clear HTTP error. Requests are read with the egress proxy's strict parser
// (egress/http_message.hpp), held to kScrapeLimits.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace sandbox_host::metrics {

// A scrape is a request line and a few headers: Prometheus sends about 300 bytes.
inline constexpr egress::HttpLimits kScrapeLimits{8192, 64, 1024};

struct ScrapeAnswer {
  int status = 200;
  std::string response;  // the whole response, Connection: close
};

// The answer to a head the parser finished (complete or error). exposition is called only
// for a scrape that gets it.
ScrapeAnswer scrape_response(const egress::RequestParse &parsed,
                             const std::function<std::string()> &exposition);

// A response with status and a text/plain body of one line naming what was wrong.
std::string error_response(int status, std::string_view reason);

}  // namespace sandbox_host::metrics
