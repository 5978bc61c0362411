// What the HTTP parts share (http_message.cpp, http_target.cpp, chunked_decoder.cpp,
// http_serialize.cpp): RFC 9110's character classes, the refusal a malformed message is
// (HttpParseError, 400 unless said), and lookups in a head's fields.
#pragma once

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress::http {

inline constexpr std::string_view kCrlf = "\r\n";
[[noreturn]] void fail(int status, std::string reason);
[[noreturn]] void fail(std::string reason);
bool is_digit(char c);
bool is_alpha(char c);
bool is_ows(char c);

// RFC 9110 5.6.2's tchar.
bool is_tchar(char c);
bool is_token(std::string_view text);

// Controls other than HTAB; the bytes no field value, reason phrase or target may hold.
bool is_forbidden_control(char c);
char lower(char c);
bool equals_ignore_case(std::string_view a, std::string_view b);
std::string lowercase(std::string_view text);
std::string_view trim_ows(std::string_view text);

// A byte for a message: printable ASCII quoted, anything else in hex, so that no reason
// carries a control character into a log line.
std::string describe_byte(char c);

// The elements of a comma-separated list (RFC 9110 5.6.1) across every header named name,
// trimmed; empty elements are kept so that callers can refuse them.
std::vector<std::string_view> list_elements(const std::vector<HttpHeader> &headers,
                                            std::string_view name);
std::size_t count_headers(const std::vector<HttpHeader> &headers, std::string_view name);
const std::string *find_header(const std::vector<HttpHeader> &headers, std::string_view name);
bool connection_has(const std::vector<HttpHeader> &headers, std::string_view option);

// A field line (RFC 9112 5), name and value; refuses what another parser could split
// differently.
HttpHeader parse_field_line(std::string_view line);

}  // namespace sandbox_host::egress::http
