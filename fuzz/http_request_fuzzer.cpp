// Fuzzes parse_request_head: whatever a client sends, the result is consistent (what it took
// fits the input, a refusal has a status and a printable reason), the same at every length
// the bytes could arrive in, and a head it took reads back the same once written out.
#include "fuzz_check.hpp"

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <cstdint>
#include <string>

namespace sandbox_host::egress::fuzz {
namespace {

bool same(const RequestParse &a, const RequestParse &b) {
  if (a.state != b.state || a.consumed != b.consumed) return false;
  if (a.state == ParseState::error) {
    return a.error.status == b.error.status && a.error.reason == b.error.reason;
  }
  const HttpRequestHead &x = a.head, &y = b.head;
  return x.method == y.method && x.target == y.target && x.minor_version == y.minor_version &&
         x.headers == y.headers && x.form == y.form && x.scheme == y.scheme && x.host == y.host &&
         x.port == y.port && x.origin_target == y.origin_target && x.framing == y.framing &&
         x.content_length == y.content_length && x.keep_alive == y.keep_alive &&
         x.upgrade == y.upgrade;
}

void check_result(const RequestParse &r, std::string_view input) {
  check(r.consumed <= input.size(), "consumed <= size");
  switch (r.state) {
    case ParseState::incomplete:
      check(r.consumed == 0, "incomplete takes nothing");
      break;
    case ParseState::error: {
      const int s = r.error.status;
      check(s == 400 || s == 414 || s == 431 || s == 501 || s == 505, "a request status");
      check(!r.error.reason.empty() && printable(r.error.reason), "a printable reason");
      check(r.consumed == 0, "an error takes nothing");
      break;
    }
    case ParseState::complete:
      check(r.consumed >= 4 && input.substr(r.consumed - 4, 4) == "\r\n\r\n",
            "a head ends in CRLF CRLF");
      check(r.head.framing != BodyFraming::until_close, "a request never runs to the close");
      check(r.head.framing == BodyFraming::content_length || r.head.content_length == 0,
            "content_length only with that framing");
      check(r.head.minor_version == 0 || r.head.minor_version == 1, "HTTP/1.0 or 1.1");
      check(r.head.form != HttpRequestHead::Form::authority || r.head.port != 0,
            "CONNECT has a port");
      check(!r.head.origin_target.empty(), "a target to send on");
      break;
  }
}

void check_incremental(const RequestParse &whole, std::string_view input,
                       const HttpLimits &limits) {
  for (const std::size_t k : cut_points(input)) {
    const RequestParse part = parse_request_head(input.substr(0, k), limits);
    check(part.state == ParseState::incomplete || same(part, whole),
          "a prefix gives incomplete or the whole input's result");
  }
  if (whole.state == ParseState::complete) {
    check(same(parse_request_head(input.substr(0, whole.consumed), limits), whole),
          "the head alone gives the same head");
    check(parse_request_head(input.substr(0, whole.consumed - 1), limits).state ==
              ParseState::incomplete,
          "the head ends exactly where consumed says");
  }
}

void check_round_trip(const RequestParse &whole, const HttpLimits &limits) {
  const HttpRequestHead &head = whole.head;
  const std::string written = serialize_request_head(head);
  HttpLimits roomy = limits;
  roomy.max_head_bytes = written.size();
  const RequestParse again = parse_request_head(written, roomy);
  check(again.state == ParseState::complete, "a written head parses");
  check(again.consumed == written.size(), "a written head is taken whole");
  const HttpRequestHead &read = again.head;
  check(read.method == head.method, "round trip keeps the method");
  check(read.target == head.origin_target, "round trip sends origin_target");
  check(read.minor_version == head.minor_version, "round trip keeps the version");
  check(read.headers == head.headers, "round trip keeps the headers");
  check(read.framing == head.framing && read.content_length == head.content_length,
        "round trip keeps the framing");
  check(read.keep_alive == head.keep_alive && read.upgrade == head.upgrade,
        "round trip keeps the connection options");
  check(read.origin_target == head.origin_target, "origin_target is a fixed point");
  check(serialize_request_head(read) == written, "writing is a fixed point");
}

}  // namespace
}  // namespace sandbox_host::egress::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host::egress;
  using namespace sandbox_host::egress::fuzz;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  // Small limits too, so that inputs of libFuzzer's usual lengths reach every limit.
  HttpLimits small;
  small.max_head_bytes = 256;
  small.max_headers = 4;
  small.max_target_bytes = 32;
  for (const HttpLimits &limits : {HttpLimits{}, small}) {
    const RequestParse whole = parse_request_head(input, limits);
    check_result(whole, input);
    check_incremental(whole, input, limits);
    if (whole.state == ParseState::complete) check_round_trip(whole, limits);
  }
  return 0;
}
