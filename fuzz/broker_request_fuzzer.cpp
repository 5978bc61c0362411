// Fuzzes parse_request, what the broker makes of the bytes a requester wrote: a Request or a
// RequestError that says why, nothing else; the same decision every time; a request it took
// reads back the same once encoded; and a request longer than the limit is refused as such.
#include "fuzz_check.hpp"

#include <sandbox_host/host/broker/protocol.hpp>
#include <sandbox_host/host/config.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>

namespace sandbox_host::broker::fuzz {
namespace {

using sandbox_host::egress::fuzz::check;

// The limit the broker serves with when the config does not set one.
const std::size_t kMaxRequestBytes = BrokerConfig{}.max_request_bytes;

struct Decision {
  std::optional<Request> request;
  std::string refusal;  // RequestError's message when request is empty
};

// Any exception but RequestError is a broken property: the broker would answer it with no
// reason, or not at all.
Decision decide(std::string_view json, std::size_t max_bytes) {
  try {
    return {parse_request(json, max_bytes), {}};
  } catch (const RequestError &e) {
    check(e.what()[0] != '\0', "a refusal says why");
    return {std::nullopt, e.what()};
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: %s\n", typeid(e).name(), e.what());
    check(false, "parse_request throws RequestError and nothing else");
  } catch (...) {
    check(false, "parse_request throws RequestError and nothing else");
  }
  return {};
}

bool same(const Request &a, const Request &b) {
  return a.op == b.op && a.unit == b.unit && a.slice == b.slice && a.max == b.max &&
         a.swap == b.swap && a.args == b.args && a.wait == b.wait && a.resource == b.resource &&
         a.input == b.input && a.stream == b.stream;
}

// Whether text is UTF-8 by the rules the encoder applies: no overlong forms, no surrogates,
// nothing past U+10FFFF.
bool utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = lead < 0xc2   ? 0
                               : lead < 0xe0 ? 2
                               : lead < 0xf0 ? 3
                               : lead < 0xf5 ? 4
                                             : 0;
    if (length == 0 || i + length > text.size()) return false;
    std::uint32_t code = lead & (0x7f >> length);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      code = (code << 6) | (next & 0x3f);
    }
    if ((length == 3 && (code < 0x800 || (code >= 0xd800 && code <= 0xdfff))) ||
        (length == 4 && (code < 0x10000 || code > 0x10ffff))) {
      return false;
    }
    i += length;
  }
  return true;
}

bool all_text_utf8(const Request &r) {
  for (const std::string *text :
       {&r.op, &r.unit, &r.slice, &r.max, &r.swap, &r.wait, &r.resource}) {
    if (!utf8(*text)) return false;
  }
  for (const std::string &arg : r.args) {
    if (!utf8(arg)) return false;
  }
  return true;
}

// The encoder writes what is not UTF-8 as U+FFFD, so only a request of UTF-8 text can come
// back the same; the decoder takes no other (Poco refuses invalid UTF-8 and lone surrogates).
void check_round_trip(const Request &request) {
  check(all_text_utf8(request), "a decoded request's text is UTF-8");
  const std::string json = encode_request(request);
  const Decision again = decide(json, json.size());
  if (!again.request) {
    std::fprintf(stderr, "%s\nrefused: %s\n", json.c_str(), again.refusal.c_str());
  }
  check(again.request.has_value(), "an encoded request decodes");
  check(same(*again.request, request), "an encoded request decodes to the same request");
}

}  // namespace
}  // namespace sandbox_host::broker::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  using namespace sandbox_host::broker::fuzz;
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const Decision first = decide(input, kMaxRequestBytes);
  const Decision second = decide(input, kMaxRequestBytes);
  check(first.request.has_value() == second.request.has_value() &&
            first.refusal == second.refusal &&
            (!first.request || same(*first.request, *second.request)),
        "the same input decides the same way twice");
  if (first.request) {
    check(!first.request->op.empty(), "a request has an op");
    check_round_trip(*first.request);
  }
  // libFuzzer's inputs are shorter than the broker's limit: the limit is checked at their size.
  if (size > 0) {
    const Decision over = decide(input, size - 1);
    check(!over.request && over.refusal.find("max_request_bytes") != std::string::npos,
          "a request longer than max_request_bytes is refused as such");
  }
  if (size > kMaxRequestBytes) {
    check(!first.request && first.refusal.find("max_request_bytes") != std::string::npos,
          "a request longer than the broker's max_request_bytes is refused as such");
  }
  return 0;
}
