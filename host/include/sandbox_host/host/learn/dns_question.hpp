// The name a DNS query asks about (RFC 1035, 4.1), read from the datagram a plugin sends to
// a resolver's port 53: the only place `run --learn` can learn which host a plugin wanted
// before it had an address. The datagram is the plugin's, so the parser trusts no count or
// length in it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sandbox_host::learn {

// The first question's name, lowercase, without the root's trailing dot ("api.example.com");
// nullopt for anything that is not a standard query with at least one question whose name
// is at most 255 bytes of labels of 1 to 63 bytes (no compression pointer: a question's
// name never needs one) or that names the root alone.
std::optional<std::string> dns_question(std::string_view datagram);

}  // namespace sandbox_host::learn
