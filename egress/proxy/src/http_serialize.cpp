// Heads written back out and headers edited (http_message.hpp): what the proxy sends on,
// refused when an edit would let it be read as two messages.
#include <sandbox_host/egress/proxy/http_message.hpp>

#include <algorithm>
#include <stdexcept>

#include "http_grammar.hpp"

namespace sandbox_host::egress {

using namespace http;

namespace {

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
