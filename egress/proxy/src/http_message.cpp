// HTTP/1.x heads and chunked bodies (http_message.hpp), by RFC 9110 and RFC 9112, refusing
// whatever another implementation could frame differently.
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

namespace sandbox_host::egress {
namespace {

constexpr std::string_view kCrlf = "\r\n";

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

// ---- the lines of a head -----------------------------------------------------------------

// Reads the lines of a head from the start of a buffer, never past the head limit.
class HeadLines {
 public:
  HeadLines(std::string_view buffer, std::size_t max_head_bytes)
      : window_(buffer.substr(0, max_head_bytes)), at_limit_(buffer.size() >= max_head_bytes) {}

  // The next line up to its LF (the CR still on it), or nullopt while it has not ended.
  std::optional<std::string_view> next_raw() {
    const auto lf = window_.find('\n', position_);
    if (lf == std::string_view::npos) return std::nullopt;
    line_start_ = position_;
    position_ = lf + 1;
    return window_.substr(line_start_, lf - line_start_);
  }

  // The line next_raw() returned, without its CRLF; a CR or LF alone ends no line here,
  // since a parser that took one for a line end would frame the message differently.
  std::string_view strip_crlf(std::string_view raw) const {
    const auto cr = raw.find('\r');
    if (cr != std::string_view::npos && cr + 1 < raw.size()) {
      fail("bare CR at byte " + std::to_string(line_start_ + cr) + ": lines end in CRLF");
    }
    if (raw.empty() || raw.back() != '\r') {
      fail("bare LF at byte " + std::to_string(line_start_ + raw.size()) + ": lines end in CRLF");
    }
    return raw.substr(0, raw.size() - 1);
  }

  // The bytes of the line that has not ended yet.
  std::string_view pending() const { return window_.substr(position_); }
  std::size_t position() const { return position_; }
  // The head did not end within the limit, and no more bytes can change that.
  bool out_of_room() const { return at_limit_; }

 private:
  std::string_view window_;
  bool at_limit_;
  std::size_t position_ = 0, line_start_ = 0;
};

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

// The header lines after the start line, up to the empty line; false while it has not come.
bool read_fields(HeadLines &lines, const HttpLimits &limits, std::vector<HttpHeader> &headers,
                 std::string_view what) {
  for (;;) {
    const auto raw = lines.next_raw();
    if (!raw) {
      if (lines.out_of_room()) {
        fail(431, std::string(what) + " head is longer than " +
                      std::to_string(limits.max_head_bytes) + " bytes");
      }
      return false;
    }
    const std::string_view line = lines.strip_crlf(*raw);
    if (line.empty()) return true;
    if (headers.size() == limits.max_headers) {
      fail(431, std::string(what) + " has more than " + std::to_string(limits.max_headers) +
                    " header fields");
    }
    headers.push_back(parse_field_line(line));
  }
}

// "HTTP/x.y" as the two digits, or nullopt when version is not of that shape.
std::optional<std::pair<int, int>> http_version(std::string_view version) {
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !is_digit(version[5]) ||
      version[6] != '.' || !is_digit(version[7])) {
    return std::nullopt;
  }
  return std::pair{version[5] - '0', version[7] - '0'};
}

// ---- framing -----------------------------------------------------------------------------

struct Framing {
  bool chunked = false;
  std::optional<std::uint64_t> content_length;
};

std::uint64_t parse_content_length(std::string_view digits) {
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    fail("Content-Length is not a decimal number");
  }
  std::uint64_t value = 0;
  for (char c : digits) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) fail("Content-Length does not fit in 64 bits");
    value = value * 10 + digit;
  }
  return value;
}

// RFC 9112 6.1 and 6.3, narrowed to what cannot be read two ways: one Content-Length, or
// Transfer-Encoding that is exactly chunked, never both, never chunked in HTTP/1.0.
Framing message_framing(const std::vector<HttpHeader> &headers, int minor_version) {
  Framing framing;
  const bool has_transfer_encoding = find_header(headers, "Transfer-Encoding") != nullptr;
  const std::size_t length_headers = count_headers(headers, "Content-Length");
  if (has_transfer_encoding) {
    if (minor_version == 0) fail("Transfer-Encoding in an HTTP/1.0 message");
    if (length_headers > 0) {
      fail("both Content-Length and Transfer-Encoding: a message has one framing");
    }
    const auto codings = list_elements(headers, "Transfer-Encoding");
    if (codings.size() != 1 || !equals_ignore_case(codings.front(), "chunked")) {
      fail(501, "Transfer-Encoding other than chunked alone is not supported");
    }
    framing.chunked = true;
  }
  if (length_headers > 1) fail("more than one Content-Length header");
  if (length_headers == 1) {
    const auto values = list_elements(headers, "Content-Length");
    framing.content_length = parse_content_length(values.front());
    for (const auto value : values) {
      if (parse_content_length(value) != *framing.content_length) {
        fail("Content-Length lists differing values");
      }
    }
  }
  return framing;
}

bool keeps_alive(const std::vector<HttpHeader> &headers, int minor_version) {
  if (connection_has(headers, "close")) return false;
  return minor_version == 1 || connection_has(headers, "keep-alive");
}

// ---- request targets ---------------------------------------------------------------------

struct Authority {
  std::string host;
  std::optional<std::uint16_t> port;
};

bool is_host_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_';
}
bool is_unreserved(char c) {
  return is_host_char(c) || c == '~';
}

void check_ipv6_literal(std::string_view literal, std::string_view what) {
  std::string_view address = literal;
  const auto percent = literal.find('%');
  if (percent != std::string_view::npos) {
    // RFC 6874: the zone id follows "%25", the percent sign percent-encoded.
    const std::string_view zone = literal.substr(percent);
    if (zone.substr(0, 3) != "%25" || zone.size() == 3 ||
        !std::all_of(zone.begin() + 3, zone.end(), is_unreserved)) {
      fail(std::string(what) + ": IPv6 zone id is not \"%25\" and a name");
    }
    address = literal.substr(0, percent);
  }
  std::array<unsigned char, 16> bytes{};
  if (::inet_pton(AF_INET6, std::string(address).c_str(), bytes.data()) != 1) {
    fail(std::string(what) + ": \"[...]\" holds no IPv6 address");
  }
}

std::uint16_t parse_port(std::string_view digits, std::string_view what) {
  if (digits.empty()) fail(std::string(what) + " has an empty port");
  if (!std::all_of(digits.begin(), digits.end(), is_digit)) {
    fail(std::string(what) + ": port is not a number");
  }
  unsigned long value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<unsigned long>(c - '0');
    if (value > 65535) break;
  }
  if (value == 0 || value > 65535) fail(std::string(what) + ": port is not in 1-65535");
  return static_cast<std::uint16_t>(value);
}

// host [":" port] of RFC 3986 without userinfo or percent-encoding: the host is passed on
// as the allow list will compare it.
Authority parse_authority(std::string_view text, std::string_view what) {
  if (text.find('@') != std::string_view::npos) {
    fail(std::string(what) + " holds userinfo (user@host): credentials in URLs are refused");
  }
  Authority authority;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) fail(std::string(what) + ": '[' without ']'");
    const std::string_view literal = text.substr(1, close - 1);
    check_ipv6_literal(literal, what);
    authority.host = std::string(literal);
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      fail(std::string(what) + ": " + describe_byte(rest.front()) + " after ']'");
    }
  } else {
    const auto colon = text.find(':');
    const std::string_view host = text.substr(0, colon);
    if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
      fail(std::string(what) + " has more than one ':' (an IPv6 address needs brackets)");
    }
    if (host.empty()) fail(std::string(what) + " has no host");
    const auto bad = std::find_if_not(host.begin(), host.end(), is_host_char);
    if (bad != host.end()) {
      fail(std::string(what) + ": host holds " + describe_byte(*bad) +
           " (letters, digits, '-', '.' and '_' only; IDNs as punycode)");
    }
    authority.host = std::string(host);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
  }
  if (!rest.empty()) authority.port = parse_port(rest.substr(1), what);
  return authority;
}

std::uint16_t default_port(std::string_view scheme) {
  if (scheme == "http") return 80;
  if (scheme == "https") return 443;
  return 0;
}

void check_target_bytes(std::string_view target) {
  if (target.empty()) fail("request target is empty");
  for (std::size_t i = 0; i < target.size(); ++i) {
    const char c = target[i];
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte == 0x7f) {
      fail("control " + describe_byte(c) + " in the request target at offset " + std::to_string(i));
    }
    if (byte >= 0x80) {
      fail("non-ASCII " + describe_byte(c) + " in the request target at offset " +
           std::to_string(i) + "; percent-encode it");
    }
    if (c == '#') fail("request target holds a fragment ('#'), which clients do not send");
  }
}

// The scheme of an absolute-form target ("scheme://..."), or nullopt when it has none.
std::optional<std::string_view> uri_scheme(std::string_view target) {
  const auto colon = target.find(':');
  if (colon == std::string_view::npos || colon == 0 || !is_alpha(target.front())) {
    return std::nullopt;
  }
  const std::string_view scheme = target.substr(0, colon);
  const bool valid = std::all_of(scheme.begin(), scheme.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.';
  });
  if (!valid || target.substr(colon + 1, 2) != "//") return std::nullopt;
  return scheme;
}

void resolve_target(HttpRequestHead &head) {
  const std::string_view target = head.target;
  if (head.method == "CONNECT") {
    if (target.find('/') != std::string_view::npos) {
      fail("CONNECT's target is host:port (authority-form), not a URL or path");
    }
    const Authority authority = parse_authority(target, "CONNECT target");
    if (!authority.port) fail("CONNECT target has no port (host:port)");
    head.form = HttpRequestHead::Form::authority;
    head.host = authority.host;
    head.port = *authority.port;
    head.origin_target = head.target;
    return;
  }
  if (target == "*") {
    if (head.method != "OPTIONS") fail("the '*' target is for OPTIONS only");
    head.form = HttpRequestHead::Form::asterisk;
    head.origin_target = "*";
    return;
  }
  if (target.front() == '/') {
    head.form = HttpRequestHead::Form::origin;
    head.origin_target = head.target;
    return;
  }
  const auto scheme = uri_scheme(target);
  if (!scheme) {
    fail(
        "request target is neither origin-form (/path), absolute-form (http://host/path) "
        "nor '*'; host:port is for CONNECT only");
  }
  head.form = HttpRequestHead::Form::absolute;
  head.scheme = lowercase(*scheme);
  const std::string_view after_scheme = target.substr(scheme->size() + 3);
  const auto path_start = after_scheme.find_first_of("/?");
  const Authority authority =
      parse_authority(after_scheme.substr(0, path_start), "request target's authority");
  head.host = authority.host;
  head.port = authority.port.value_or(default_port(head.scheme));
  const std::string_view path =
      path_start == std::string_view::npos ? std::string_view() : after_scheme.substr(path_start);
  head.origin_target =
      path.empty() || path.front() == '?' ? "/" + std::string(path) : std::string(path);
}

// A request target longer than the limit, found in the request line as soon as that many
// bytes of it have arrived: the run after the first SP up to the next SP, CR or LF.
void check_target_length(std::string_view line, const HttpLimits &limits) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos) return;
  const std::string_view after = line.substr(space + 1);
  const std::size_t run = std::min(after.find_first_of(" \r\n"), after.size());
  if (run > limits.max_target_bytes) {
    fail(414,
         "request target is longer than " + std::to_string(limits.max_target_bytes) + " bytes");
  }
}

void parse_request_line(std::string_view line, HttpRequestHead &head) {
  const auto first = line.find(' ');
  const auto last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) {
    fail("request line is not \"method SP target SP HTTP-version\"");
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, last - first - 1);
  const std::string_view version = line.substr(last + 1);
  if (method == "PRI" && target == "*" && version == "HTTP/2.0") {
    fail(505, "HTTP/2 connection preface (PRI * HTTP/2.0): this proxy speaks HTTP/1.1 only");
  }
  const auto numbers = http_version(version);
  if (!numbers) {
    fail(target.find(' ') != std::string_view::npos
             ? "request line has more than two spaces (a space in a target is written %20)"
             : "request line does not end in HTTP/1.0 or HTTP/1.1");
  }
  if (numbers->first != 1 || numbers->second > 1) {
    fail(505,
         "HTTP version " + std::string(version.substr(5)) + " is not supported; only 1.0 and 1.1");
  }
  if (!is_token(method)) {
    fail(method.empty() ? "request line starts with a space" : "request method is not a token");
  }
  if (target.find(' ') != std::string_view::npos) {
    fail("request line has more than two spaces (a space in a target is written %20)");
  }
  check_target_bytes(target);
  head.method = std::string(method);
  head.target = std::string(target);
  head.minor_version = numbers->second;
}

void check_host_header(const HttpRequestHead &head) {
  const std::size_t hosts = count_headers(head.headers, "Host");
  if (hosts > 1) fail("more than one Host header");
  if (hosts == 0) {
    if (head.minor_version == 1) fail("HTTP/1.1 request without a Host header");
    return;
  }
  parse_authority(*head.header("Host"), "Host header");
}

void parse_request(std::string_view buffer, const HttpLimits &limits, RequestParse &result) {
  HeadLines lines(buffer, limits.max_head_bytes);
  // RFC 9112 2.2: empty lines before a request line are skipped (left after a body by some).
  auto raw = lines.next_raw();
  while (raw && *raw == "\r") raw = lines.next_raw();
  if (!raw) {
    check_target_length(lines.pending(), limits);
    if (lines.out_of_room()) {
      fail(431, "request head is longer than " + std::to_string(limits.max_head_bytes) + " bytes");
    }
    return;
  }
  check_target_length(*raw, limits);
  HttpRequestHead &head = result.head;
  parse_request_line(lines.strip_crlf(*raw), head);
  if (!read_fields(lines, limits, head.headers, "request")) return;

  check_host_header(head);
  resolve_target(head);
  const Framing framing = message_framing(head.headers, head.minor_version);
  if (head.form == HttpRequestHead::Form::authority) {
    if (framing.chunked || framing.content_length.value_or(0) != 0) {
      fail("CONNECT request with content");
    }
  } else if (framing.chunked) {
    head.framing = BodyFraming::chunked;
  } else if (framing.content_length) {
    head.framing = BodyFraming::content_length;
    head.content_length = *framing.content_length;
  }
  head.keep_alive = keeps_alive(head.headers, head.minor_version);
  head.upgrade = find_header(head.headers, "Upgrade") != nullptr;
  result.state = ParseState::complete;
  result.consumed = lines.position();
}

// ---- responses ---------------------------------------------------------------------------

void parse_status_line(std::string_view line, HttpResponseHead &head) {
  const auto numbers = http_version(line.substr(0, 8));
  if (!numbers) fail("status line does not start with HTTP/1.x");
  if (numbers->first != 1 || numbers->second > 1) {
    fail("upstream answered in HTTP/" + std::string(line.substr(5, 3)) +
         "; only 1.0 and 1.1 are supported");
  }
  const std::string_view code = line.size() >= 12 ? line.substr(9, 3) : std::string_view();
  if (code.empty() || line[8] != ' ' || !std::all_of(code.begin(), code.end(), is_digit)) {
    fail("status line is not \"HTTP-version SP 3-digit-status SP reason\"");
  }
  if (line.size() > 12 && line[12] != ' ') fail("status code is not followed by a space");
  const int status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
  if (status < 100 || status > 599) fail("status " + std::string(code) + " is not in 100-599");
  const std::string_view reason = line.size() > 12 ? line.substr(13) : std::string_view();
  const auto control = std::find_if(reason.begin(), reason.end(), is_forbidden_control);
  if (control != reason.end()) fail("control " + describe_byte(*control) + " in the reason phrase");
  head.minor_version = numbers->second;
  head.status = status;
  head.reason = std::string(reason);
}

void parse_response(std::string_view buffer, std::string_view request_method,
                    const HttpLimits &limits, ResponseParse &result) {
  HeadLines lines(buffer, limits.max_head_bytes);
  const auto raw = lines.next_raw();
  if (!raw) {
    if (lines.out_of_room()) {
      fail("response head is longer than " + std::to_string(limits.max_head_bytes) + " bytes");
    }
    return;
  }
  HttpResponseHead &head = result.head;
  parse_status_line(lines.strip_crlf(*raw), head);
  if (!read_fields(lines, limits, head.headers, "response")) return;

  // Checked on every response, bodiless or not: a header two parsers read differently is
  // refused wherever it appears.
  const Framing framing = message_framing(head.headers, head.minor_version);
  // RFC 9112 6.3: these end at the empty line whatever their headers say.
  const bool bodiless = head.status < 200 || head.status == 204 || head.status == 304 ||
                        request_method == "HEAD" ||
                        (request_method == "CONNECT" && head.status < 300);
  if (bodiless) {
    head.framing = BodyFraming::none;
  } else if (framing.chunked) {
    head.framing = BodyFraming::chunked;
  } else if (framing.content_length) {
    head.framing = BodyFraming::content_length;
    head.content_length = *framing.content_length;
  } else {
    head.framing = BodyFraming::until_close;
  }
  head.keep_alive =
      head.framing != BodyFraming::until_close && keeps_alive(head.headers, head.minor_version);
  result.state = ParseState::complete;
  result.consumed = lines.position();
}

// ---- writing heads back ------------------------------------------------------------------

void append_fields(std::string &out, const std::vector<HttpHeader> &headers) {
  for (const auto &header : headers) {
    if (!is_token(header.name)) {
      throw std::invalid_argument("header name \"" + header.name + "\" is not a token");
    }
    if (std::any_of(header.value.begin(), header.value.end(), is_forbidden_control)) {
      throw std::invalid_argument("header \"" + header.name + "\" holds a control character");
    }
    out.append(header.name).append(": ").append(header.value).append(kCrlf);
  }
  out.append(kCrlf);
}

}  // namespace

HttpParseError::HttpParseError(HttpError error)
    : std::runtime_error(error.reason), error_(std::move(error)) {}

const std::string *HttpRequestHead::header(std::string_view name) const {
  return find_header(headers, name);
}

const std::string *HttpResponseHead::header(std::string_view name) const {
  return find_header(headers, name);
}

RequestParse parse_request_head(std::string_view buffer, const HttpLimits &limits) {
  RequestParse result;
  try {
    parse_request(buffer, limits, result);
  } catch (const HttpParseError &e) {
    result = RequestParse{ParseState::error, 0, {}, e.error()};
  }
  if (result.state == ParseState::incomplete) result.head = {};
  return result;
}

ResponseParse parse_response_head(std::string_view buffer, std::string_view request_method,
                                  const HttpLimits &limits) {
  ResponseParse result;
  try {
    parse_response(buffer, request_method, limits, result);
  } catch (const HttpParseError &e) {
    // Whatever is wrong with an upstream's answer, the client gets a bad gateway.
    result = ResponseParse{ParseState::error, 0, {}, HttpError{502, e.error().reason}};
  }
  if (result.state == ParseState::incomplete) result.head = {};
  return result;
}

// ---- ChunkedDecoder ----------------------------------------------------------------------

ChunkedDecoder::ChunkedDecoder(const HttpLimits &limits) : limits_(limits) {}

bool ChunkedDecoder::done() const noexcept {
  return stage_ == Stage::done;
}

void ChunkedDecoder::fail(std::string reason) {
  stage_ = Stage::failed;
  failure_ = HttpError{400, std::move(reason)};
  throw HttpParseError(failure_);
}

std::size_t ChunkedDecoder::feed(std::string_view in, std::string &out) {
  std::size_t used = 0;
  while (used < in.size()) {
    switch (stage_) {
      case Stage::failed:
        throw HttpParseError(failure_);
      case Stage::done:
        return used;
      case Stage::data: {
        const auto take =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, in.size() - used));
        out.append(in.substr(used, take));
        used += take;
        remaining_ -= take;
        if (remaining_ == 0) stage_ = Stage::data_end;
        break;
      }
      case Stage::data_end:
        if (in[used] != kCrlf[data_end_seen_]) fail("chunk data is not followed by CRLF");
        ++used;
        if (++data_end_seen_ == kCrlf.size()) {
          data_end_seen_ = 0;
          stage_ = Stage::size_line;
        }
        break;
      case Stage::size_line:
      case Stage::trailer: {
        // A line is held to its limit, LF included, as its bytes come.
        const bool size_line = stage_ == Stage::size_line;
        const std::string_view rest = in.substr(used);
        const auto lf = rest.find('\n');
        const bool ended = lf != std::string_view::npos;
        const std::size_t take = ended ? lf + 1 : rest.size();
        const std::size_t limit = size_line ? kMaxSizeLineBytes : limits_.max_head_bytes;
        if ((size_line ? line_.size() : trailer_bytes_) + take > limit) {
          fail(size_line ? "chunk size line is longer than " + std::to_string(limit) + " bytes"
                         : "trailer section is longer than " + std::to_string(limit) + " bytes");
        }
        line_.append(rest.substr(0, take));
        if (!size_line) trailer_bytes_ += take;
        used += take;
        if (!ended) break;
        line_.pop_back();
        if (size_line) {
          finish_size_line();
        } else {
          finish_trailer_line();
        }
        line_.clear();
        break;
      }
    }
  }
  if (stage_ == Stage::failed) throw HttpParseError(failure_);
  return used;
}

void ChunkedDecoder::finish_size_line() {
  if (line_.empty() || line_.back() != '\r')
    fail("bare LF in a chunk size line: lines end in CRLF");
  const std::string_view line = std::string_view(line_).substr(0, line_.size() - 1);
  if (line.find('\r') != std::string_view::npos) fail("bare CR in a chunk size line");
  std::size_t digits = 0;
  std::uint64_t size = 0;
  for (; digits < line.size(); ++digits) {
    const char c = lower(line[digits]);
    const int value = is_digit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (value < 0) break;
    if (size > (UINT64_MAX >> 4)) fail("chunk size does not fit in 64 bits");
    size = (size << 4) | static_cast<std::uint64_t>(value);
  }
  if (digits == 0) fail("chunk size is not a hexadecimal number");
  // RFC 9112 7.1.1: chunk extensions, BWS ";" name ["=" value], checked for stray bytes and
  // dropped.
  std::string_view extensions = line.substr(digits);
  while (!extensions.empty() && is_ows(extensions.front())) extensions.remove_prefix(1);
  if (extensions.empty() && digits != line.size()) fail("whitespace after the chunk size");
  if (!extensions.empty() && extensions.front() != ';') {
    fail("chunk size is followed by " + describe_byte(extensions.front()) +
         ", not a chunk extension (';') or CRLF");
  }
  const auto control = std::find_if(extensions.begin(), extensions.end(), is_forbidden_control);
  if (control != extensions.end()) {
    fail("control " + describe_byte(*control) + " in a chunk extension");
  }
  if (size == 0) {
    stage_ = Stage::trailer;
  } else {
    remaining_ = size;
    stage_ = Stage::data;
  }
}

void ChunkedDecoder::finish_trailer_line() {
  if (line_.empty() || line_.back() != '\r')
    fail("bare LF in the trailer section: lines end in CRLF");
  const std::string_view line = std::string_view(line_).substr(0, line_.size() - 1);
  if (line.find('\r') != std::string_view::npos) fail("bare CR in the trailer section");
  if (line.empty()) {
    stage_ = Stage::done;
    return;
  }
  if (trailer_fields_ == limits_.max_headers) {
    fail("trailer section has more than " + std::to_string(limits_.max_headers) + " fields");
  }
  try {
    parse_field_line(line);
  } catch (const HttpParseError &e) {
    fail("trailer field: " + e.error().reason);
  }
  ++trailer_fields_;
}

// ---- serialising -------------------------------------------------------------------------

std::string serialize_request_head(const HttpRequestHead &head) {
  if (!is_token(head.method)) throw std::invalid_argument("request method is not a token");
  if (head.minor_version != 0 && head.minor_version != 1) {
    throw std::invalid_argument("HTTP/1." + std::to_string(head.minor_version) +
                                " is not 1.0 or 1.1");
  }
  const std::string &target = head.origin_target;
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte <= 0x20 || byte >= 0x7f;
      })) {
    throw std::invalid_argument(
        "request target is empty or holds a space, control or non-ASCII byte");
  }
  if (target.find('#') != std::string::npos) {
    throw std::invalid_argument("request target holds a fragment ('#')");
  }
  std::string out;
  out.append(head.method).append(" ").append(target).append(" HTTP/1.");
  out.append(std::to_string(head.minor_version)).append(kCrlf);
  append_fields(out, head.headers);
  return out;
}

std::string serialize_response_head(const HttpResponseHead &head) {
  if (head.minor_version != 0 && head.minor_version != 1) {
    throw std::invalid_argument("HTTP/1." + std::to_string(head.minor_version) +
                                " is not 1.0 or 1.1");
  }
  if (head.status < 100 || head.status > 599) {
    throw std::invalid_argument("status " + std::to_string(head.status) + " is not in 100-599");
  }
  if (std::any_of(head.reason.begin(), head.reason.end(), is_forbidden_control)) {
    throw std::invalid_argument("reason phrase holds a control character");
  }
  std::string out = "HTTP/1." + std::to_string(head.minor_version) + " " +
                    std::to_string(head.status) + " " + head.reason;
  out.append(kCrlf);
  append_fields(out, head.headers);
  return out;
}

// ---- editing headers ---------------------------------------------------------------------

std::size_t erase_headers(std::vector<HttpHeader> &headers, std::string_view name) {
  return static_cast<std::size_t>(std::erase_if(
      headers, [&](const HttpHeader &header) { return equals_ignore_case(header.name, name); }));
}

void erase_hop_by_hop_headers(std::vector<HttpHeader> &headers) {
  std::vector<std::string> names;
  for (const auto option : list_elements(headers, "Connection")) {
    if (!option.empty()) names.emplace_back(option);
  }
  for (const auto name : {"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization",
                          "TE", "Trailer", "Transfer-Encoding", "Upgrade"}) {
    names.emplace_back(name);
  }
  for (const auto &name : names) erase_headers(headers, name);
}

}  // namespace sandbox_host::egress
