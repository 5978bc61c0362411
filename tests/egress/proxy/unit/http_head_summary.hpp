// What the HTTP parser tests (http_request_head_test, http_response_head_test,
// http_head_writing_test) read of a parse: the parsers called with the default limits, and a
// result's state, what it took, and its error or its head on one line.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <string>
#include <string_view>

namespace sandbox_host::egress::http_test {

inline RequestParse parse(std::string_view text, const HttpLimits &limits = {}) {
  return parse_request_head(text, limits);
}

inline ResponseParse response(std::string_view text, std::string_view method = "GET",
                              const HttpLimits &limits = {}) {
  return parse_response_head(text, method, limits);
}

// What a user reads of a result: its state, what it took, and its error or its head.
inline std::string summary(const RequestParse &r) {
  if (r.state == ParseState::incomplete) return "incomplete";
  if (r.state == ParseState::error) {
    return "error " + std::to_string(r.error.status) + ": " + r.error.reason;
  }
  std::string out = "complete " + std::to_string(r.consumed) + ": " + r.head.method + " " +
                    r.head.target + " 1." + std::to_string(r.head.minor_version) + " form " +
                    std::to_string(static_cast<int>(r.head.form)) + " " + r.head.scheme + " " +
                    r.head.host + " " + std::to_string(r.head.port) + " " + r.head.origin_target +
                    " framing " + std::to_string(static_cast<int>(r.head.framing)) + " " +
                    std::to_string(r.head.content_length) + (r.head.keep_alive ? " ka" : "") +
                    (r.head.upgrade ? " upgrade" : "");
  for (const auto &h : r.head.headers) out += " [" + h.name + "=" + h.value + "]";
  return out;
}

inline std::string summary(const ResponseParse &r) {
  if (r.state == ParseState::incomplete) return "incomplete";
  if (r.state == ParseState::error) {
    return "error " + std::to_string(r.error.status) + ": " + r.error.reason;
  }
  std::string out = "complete " + std::to_string(r.consumed) + ": 1." +
                    std::to_string(r.head.minor_version) + " " + std::to_string(r.head.status) +
                    " " + r.head.reason + " framing " +
                    std::to_string(static_cast<int>(r.head.framing)) + " " +
                    std::to_string(r.head.content_length) + (r.head.keep_alive ? " ka" : "");
  for (const auto &h : r.head.headers) out += " [" + h.name + "=" + h.value + "]";
  return out;
}

}  // namespace sandbox_host::egress::http_test
