#include <sandbox_host/egress/proxy/authorization.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace sandbox_host::egress {
namespace {

// The one host whose git endpoint refuses "token" and wants Basic.
constexpr std::string_view kBasicHost = "github.com";
// GitHub's user name for a token sent as Basic credentials.
constexpr std::string_view kBasicUser = "x-access-token:";

bool is_basic_host(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);
  return std::equal(
      host.begin(), host.end(), kBasicHost.begin(), kBasicHost.end(),
      [](char a, char b) { return (a >= 'A' && a <= 'Z' ? a + ('a' - 'A') : a) == b; });
}

std::string base64(std::string_view bytes) {
  // EVP_EncodeBlock writes 4 characters per 3 bytes (the last group padded) and a NUL.
  std::vector<unsigned char> encoded(4 * ((bytes.size() + 2) / 3) + 1);
  const int length =
      EVP_EncodeBlock(encoded.data(), reinterpret_cast<const unsigned char *>(bytes.data()),
                      static_cast<int>(bytes.size()));
  return std::string(encoded.begin(), encoded.begin() + length);
}

}  // namespace

std::string authorization(std::string_view host, std::string_view token) {
  if (token.empty()) throw std::invalid_argument("no token to send to " + std::string(host));
  const bool header_safe = std::all_of(token.begin(), token.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte != 0x7f;
  });
  if (!header_safe) {
    throw std::invalid_argument("the token for " + std::string(host) +
                                " holds a space or a control character; it is not sent");
  }
  if (is_basic_host(host)) return "Basic " + base64(std::string(kBasicUser) + std::string(token));
  return "token " + std::string(token);
}

std::string basic_credentials(std::string_view credential) {
  if (credential.find(':') == std::string_view::npos) {
    throw std::invalid_argument("the parent proxy credential is not user:password (it has no ':')");
  }
  const bool printable = std::none_of(credential.begin(), credential.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (!printable) {
    throw std::invalid_argument("the parent proxy credential holds a control character");
  }
  return "Basic " + base64(credential);
}

}  // namespace sandbox_host::egress
