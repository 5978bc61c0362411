// Fuzzes parse_response_head (as the answer to GET, HEAD and CONNECT) and ChunkedDecoder:
// results consistent and the same at every length the bytes could arrive in, heads that
// read back the same once written out, and chunked bodies that decode the same in any
// pieces, to no more bytes than went in.
#include "fuzz_check.hpp"

#include <sandbox_host/egress/proxy/http_message.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace sandbox_host::egress::fuzz {
namespace {

bool same(const ResponseParse &a, const ResponseParse &b) {
  if (a.state != b.state || a.consumed != b.consumed) return false;
  if (a.state == ParseState::error) {
    return a.error.status == b.error.status && a.error.reason == b.error.reason;
  }
  const HttpResponseHead &x = a.head, &y = b.head;
  return x.minor_version == y.minor_version && x.status == y.status && x.reason == y.reason &&
         x.headers == y.headers && x.framing == y.framing && x.content_length == y.content_length &&
         x.keep_alive == y.keep_alive;
}

// The request's method decides the framing only, so the cuts are tried with one method.
ResponseParse check_response(std::string_view input, std::string_view method,
                             const HttpLimits &limits, bool cuts) {
  const ResponseParse whole = parse_response_head(input, method, limits);
  check(whole.consumed <= input.size(), "consumed <= size");
  if (whole.state == ParseState::error) {
    check(whole.error.status == 502, "a bad response is a bad gateway");
    check(!whole.error.reason.empty() && printable(whole.error.reason), "a printable reason");
  }
  for (const std::size_t k : cuts ? cut_points(input) : std::vector<std::size_t>{}) {
    const ResponseParse part = parse_response_head(input.substr(0, k), method, limits);
    check(part.state == ParseState::incomplete || same(part, whole),
          "a prefix gives incomplete or the whole input's result");
  }
  if (whole.state != ParseState::complete) return whole;

  const HttpResponseHead &head = whole.head;
  check(head.status >= 100 && head.status <= 599, "a status in 100-599");
  check(head.framing != BodyFraming::until_close || !head.keep_alive,
        "a body to the close ends the connection");
  const bool bodiless = head.status < 200 || head.status == 204 || head.status == 304 ||
                        method == "HEAD" || (method == "CONNECT" && head.status < 300);
  check(!bodiless || head.framing == BodyFraming::none, "RFC 9112's bodiless responses");
  check(parse_response_head(input.substr(0, whole.consumed - 1), method, limits).state ==
            ParseState::incomplete,
        "the head ends exactly where consumed says");

  const std::string written = serialize_response_head(head);
  HttpLimits roomy = limits;
  roomy.max_head_bytes = written.size();
  const ResponseParse again = parse_response_head(written, method, roomy);
  check(again.state == ParseState::complete && again.consumed == written.size(),
        "a written head parses whole");
  check(same(again, ResponseParse{ParseState::complete, written.size(), head, {}}),
        "round trip keeps the head");
  return whole;
}

struct Decoded {
  std::string data;
  std::size_t used = 0;
  bool done = false;
  std::optional<std::string> error;
};

// Decodes body in pieces of the given sizes, cycled; an empty list feeds it at once.
Decoded decode(std::string_view body, const std::vector<std::size_t> &pieces) {
  ChunkedDecoder decoder;
  Decoded result;
  try {
    std::size_t at = 0, piece = 0;
    do {
      const std::size_t length = pieces.empty() ? body.size() : pieces[piece++ % pieces.size()];
      const std::string_view in = body.substr(at, length);
      const std::size_t before = result.data.size();
      const std::size_t used = decoder.feed(in, result.data);
      check(used <= in.size(), "feed uses no more than it gets");
      check(result.data.size() - before <= used, "feed puts out no more than it used");
      check(used == in.size() || decoder.done(), "feed uses everything until done");
      result.used += used;
      at += in.size();
    } while (at < body.size() && !decoder.done());
  } catch (const HttpParseError &e) {
    check(!e.error().reason.empty() && printable(e.error().reason), "a printable reason");
    result.error = e.error().reason;
  }
  result.done = decoder.done();
  return result;
}

void check_chunked(std::string_view body) {
  const Decoded whole = decode(body, {});
  check(whole.data.size() <= body.size(), "output <= input");
  check(whole.error || (whole.data.size() <= whole.used && whole.used <= body.size()),
        "output <= used <= input");
  // A byte at a time costs a call per byte: for short bodies only.
  std::vector<std::vector<std::size_t>> ways = {{2, 5}};
  if (body.size() <= 512) ways.push_back({1});
  if (!body.empty()) ways.push_back({1 + static_cast<unsigned char>(body.front()) % 13u, 1});
  for (const auto &pieces : ways) {
    const Decoded split = decode(body, pieces);
    check(split.data == whole.data && split.error == whole.error && split.done == whole.done,
          "decoding in pieces gives the same");
    check(whole.error || split.used == whole.used, "decoding in pieces uses the same");
  }
  if (!whole.done) return;
  // Written out again in one chunk, the data decodes to itself.
  std::string again;
  if (!whole.data.empty()) {
    constexpr std::string_view kHex = "0123456789abcdef";
    std::string size;
    for (std::size_t n = whole.data.size(); n > 0; n >>= 4)
      size.insert(size.begin(), kHex[n & 0xf]);
    again = size + "\r\n" + whole.data + "\r\n";
  }
  again += "0\r\n\r\n";
  const Decoded reread = decode(again, {});
  check(reread.done && reread.data == whole.data && reread.used == again.size(),
        "re-chunked data decodes to itself");
}

}  // namespace
}  // namespace sandbox_host::egress::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host::egress;
  using namespace sandbox_host::egress::fuzz;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  HttpLimits small;
  small.max_head_bytes = 256;
  small.max_headers = 4;
  check_response(input, "GET", small, true);
  const ResponseParse head = check_response(input, "GET", {}, true);
  for (const std::string_view method : {"HEAD", "CONNECT"}) {
    const ResponseParse other = check_response(input, method, {}, false);
    check(other.state == head.state && other.consumed == head.consumed &&
              other.head.status == head.head.status,
          "the method changes the framing only");
  }
  // The body after a chunked head, or else the whole input as a body of its own.
  const bool chunked =
      head.state == ParseState::complete && head.head.framing == BodyFraming::chunked;
  check_chunked(chunked ? input.substr(head.consumed) : input);
  return 0;
}
