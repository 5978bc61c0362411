// Request targets (RFC 9112 3.2) and authorities as the proxy takes them from a request
// line and a Host header: each form a method may use, resolved to where the request goes,
// and nothing an allow list or an upstream could read another way.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::egress::http {

struct Authority {
  std::string host;
  std::optional<std::uint16_t> port;
};

// host [":" port] of RFC 3986 without userinfo or percent-encoding: the host is passed on
// as the allow list will compare it.
Authority parse_authority(std::string_view text, std::string_view what);

// Refuses a target that is empty or holds a control, a non-ASCII byte or a fragment.
void check_target_bytes(std::string_view target);

// Sets head's form, host, port, scheme and origin_target from its method and target;
// refuses a target of a form its method may not use.
void resolve_target(HttpRequestHead &head);

// A request target longer than the limit, found in the request line as soon as that many
// bytes of it have arrived: the run after the first SP up to the next SP, CR or LF.
void check_target_length(std::string_view line, const HttpLimits &limits);

}  // namespace sandbox_host::egress::http
