#include "http_grammar.hpp"

#include <algorithm>

namespace sandbox_host::egress::http {

[[noreturn]] void fail(int status, std::string reason) {
  throw HttpParseError(HttpError{status, std::move(reason)});
}
[[noreturn]] void fail(std::string reason) {
  fail(400, std::move(reason));
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_ows(char c) {
  return c == ' ' || c == '\t';
}
// RFC 9110 5.6.2's tchar.
bool is_tchar(char c) {
  return is_alpha(c) || is_digit(c) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
bool is_token(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_tchar);
}
// Controls other than HTAB; the bytes no field value, reason phrase or target may hold.
bool is_forbidden_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (byte < 0x20 && c != '\t') || byte == 0x7f;
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
bool equals_ignore_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}
std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

std::string_view trim_ows(std::string_view text) {
  while (!text.empty() && is_ows(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_ows(text.back())) text.remove_suffix(1);
  return text;
}

// A byte for a message: printable ASCII quoted, anything else in hex, so that no reason
// carries a control character into a log line.
std::string describe_byte(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte > 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  constexpr std::string_view kHex = "0123456789abcdef";
  return std::string("byte 0x") + kHex[byte >> 4] + kHex[byte & 0xf];
}

// The elements of a comma-separated list (RFC 9110 5.6.1) across every header named name,
// trimmed; empty elements are kept so that callers can refuse them.
std::vector<std::string_view> list_elements(const std::vector<HttpHeader> &headers,
                                            std::string_view name) {
  std::vector<std::string_view> elements;
  for (const auto &header : headers) {
    if (!equals_ignore_case(header.name, name)) continue;
    std::string_view rest = header.value;
    for (;;) {
      const auto comma = rest.find(',');
      elements.push_back(trim_ows(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return elements;
}

std::size_t count_headers(const std::vector<HttpHeader> &headers, std::string_view name) {
  return static_cast<std::size_t>(std::count_if(headers.begin(), headers.end(), [&](const auto &h) {
    return equals_ignore_case(h.name, name);
  }));
}

const std::string *find_header(const std::vector<HttpHeader> &headers, std::string_view name) {
  for (const auto &header : headers) {
    if (equals_ignore_case(header.name, name)) return &header.value;
  }
  return nullptr;
}

bool connection_has(const std::vector<HttpHeader> &headers, std::string_view option) {
  const auto options = list_elements(headers, "Connection");
  return std::any_of(options.begin(), options.end(),
                     [&](std::string_view o) { return equals_ignore_case(o, option); });
}

HttpHeader parse_field_line(std::string_view line) {
  if (is_ows(line.front())) {
    fail(
        "header line starts with whitespace: obs-fold (a header continued on the next line) "
        "is not accepted");
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) fail("header line without a colon");
  const std::string_view name = line.substr(0, colon);
  if (name.empty()) fail("header line with an empty name");
  if (is_ows(name.back())) {
    fail("whitespace between a header name and its colon");
  }
  if (!is_token(name)) {
    const auto bad = *std::find_if_not(name.begin(), name.end(), is_tchar);
    fail("header name holds " + describe_byte(bad) + ", which is not a token character");
  }
  const std::string_view value = trim_ows(line.substr(colon + 1));
  const auto control = std::find_if(value.begin(), value.end(), is_forbidden_control);
  if (control != value.end()) {
    fail("control " + describe_byte(*control) + " in the value of header \"" + std::string(name) +
         "\"");
  }
  return HttpHeader{std::string(name), std::string(value)};
}

}  // namespace sandbox_host::egress::http
