// HTTP/1.x request and response heads (http_message.hpp), by RFC 9110 and RFC 9112,
// refusing whatever another implementation could frame differently.
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <algorithm>
#include <optional>
#include <utility>

#include "http_grammar.hpp"
#include "http_target.hpp"

namespace sandbox_host::egress {

using namespace http;

namespace {

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

}  // namespace sandbox_host::egress
