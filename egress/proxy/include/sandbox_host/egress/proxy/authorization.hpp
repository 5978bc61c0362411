// The Authorization header the egress proxy sets for an inject host
// (docs/design.md#egress-directory-and-credential-headers): git's endpoint on github.com
// takes Basic only, the API a token.
#pragma once

#include <string>
#include <string_view>

namespace sandbox_host::egress {

// github.com: "Basic " + base64("x-access-token:" + token); any other host (api.github.com
// ...): "token " + token. host is compared case-insensitively, one trailing dot ignored.
// Throws std::invalid_argument, never naming the token, for an empty token or one with a
// control character or space, which would end or split the header.
std::string authorization(std::string_view host, std::string_view token);

// "Basic " + base64(credential), for the parent proxy's Proxy-Authorization. credential is
// "user:password". Throws std::invalid_argument, never naming it, when it has no ':' or a
// control character.
std::string basic_credentials(std::string_view credential);

}  // namespace sandbox_host::egress
