// The hosts the egress proxy lets a client reach (docs/egress.md#the-allow-list-allow): exact
// names,
// "*.example.com" for subdomains, IP literals, each with the ports it allows.
#pragma once

#include <sandbox_host/egress/destination/entry_error.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sandbox_host::egress {

// Normalises a host name for comparison: one trailing dot removed, lowercase, IDN labels to
// punycode (libidn2, UTS #46 processing of IDNA2008 as curl does it: nontransitional, then
// transitional when that fails), checked as a DNS name (labels 1..63 of letters, digits,
// hyphen, not starting or ending with a hyphen; an underscore allowed, since real names
// carry them; total <= 253; a name that ends in a number must be an IPv4 address). An IP
// literal, in any spelling parse_ip_literal takes, comes back in its canonical form.
// Throws std::invalid_argument naming the host and what is wrong with it.
std::string normalize_host_name(std::string_view host);

struct AllowDecision {
  bool allowed = false;
  std::string rule;  // the entry that allowed it, or why nothing did ("no entry for
                     // example.org", "port 8080 is not allowed for github.com (entry
                     // github.com allows 80, 443)")
};

class HostAllowList {
 public:
  // Entries: "github.com" (exactly that host), "*.github.com" (its subdomains at any depth,
  // never github.com itself), IP literals ("127.0.0.1", "::1", "[::1]"), each optionally
  // with ports: "github.com:443", "*.example.com:443,8443", "127.0.0.1:8443", "[::1]:8443".
  // Names are normalised as normalize_host_name does and IP literals compared on their
  // canonical form. Without ports an entry allows 80 and 443 only; entries for the same
  // host add their ports up. Throws EntryError naming the bad entry (empty, "*"
  // alone, "*foo.com", "foo.*.com", bad port, port 0, a label too long ...).
  static HostAllowList parse(const std::vector<std::string> &entries);

  // The entries, as written and in their order, that allow a host no domain covers: a
  // name covers itself; "*.d" covers every name and "*." entry below d, and "*.d" itself,
  // never d. Ports do not matter: domains carry none. Throws as parse does for a bad
  // entry, and as normalize_host_name does for a bad domain.
  static std::vector<std::string> outside(const std::vector<std::string> &entries,
                                          const std::vector<std::string> &domains);

  // host as the client wrote it (name or IP literal, any spelling); normalised first. A
  // host that is no valid name is refused, the rule saying what is wrong with it.
  AllowDecision decide(std::string_view host, std::uint16_t port) const;
  bool empty() const;

 private:
  struct Entry {
    std::string text;                  // as the operator wrote it
    std::vector<std::uint16_t> ports;  // sorted, each once
  };
  using Rule = std::vector<Entry>;  // the entries for one host, in the order written
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const {
      return std::hash<std::string_view>{}(text);
    }
  };
  using Rules = std::unordered_map<std::string, Rule, StringHash, std::equal_to<>>;

  Rules exact_;     // normalised names and canonical IP literals
  Rules wildcard_;  // "*.github.com" under "github.com"
};

}  // namespace sandbox_host::egress
