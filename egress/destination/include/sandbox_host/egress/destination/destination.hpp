// Where the egress proxy may dial: a host resolved once, every address checked against the
// special-purpose ranges and the proxy's own addresses, and only the checked addresses
// dialled, so a DNS answer cannot change between the check and the connection.
#pragma once

#include <sandbox_host/egress/destination/entry_error.hpp>
#include <sandbox_host/egress/destination/ip_address.hpp>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::egress {

// CIDR blocks the operator allows explicitly despite special_range ("127.0.0.1",
// "127.0.0.0/8", "::1/128", "10.1.0.0/16"). The proxy's own listening addresses are refused
// always, except when an entry names that address alone ("127.0.0.1", "127.0.0.1/32"): a
// wider block that happens to hold it does not let a client loop through the proxy.
// An IPv4-mapped IPv6 address is judged as the IPv4 address it stands for.
class AddressPolicy {
 public:
  // Throws EntryError naming the bad entry (not an address, a prefix length out
  // of range, bits set past the prefix length).
  static AddressPolicy parse(const std::vector<std::string> &allowed);
  void add_own(const IpAddress &address);  // the proxy's own addresses
  // Why address may not be dialled, naming the rule ("127.0.0.1 is loopback 127.0.0.0/8;
  // allow it with [egress] allow_addresses"); nullopt when it may.
  std::optional<std::string> refusal(const IpAddress &address) const;

 private:
  struct Block {
    IpAddress network;
    int prefix_length = 0;
  };
  bool allows(const IpAddress &address) const;
  bool names_alone(const IpAddress &address) const;

  std::vector<Block> allowed_;
  std::vector<IpAddress> own_;
};

// Names the operator (or a test) maps to addresses instead of DNS, like curl --resolve:
// host name (normalised as normalize_host_name does) -> addresses.
using ResolverOverrides = std::map<std::string, std::vector<IpAddress>>;

struct Resolution {
  std::vector<IpAddress> addresses;  // every one checked; dial these and nothing else
  std::string refusal;               // non-empty: why the host may not be reached
};

// Every IPv4 and IPv6 address name resolves to, each once, in the resolver's order; empty,
// with the resolver's error in error, when there is none. Checks nothing. Blocks.
std::vector<IpAddress> resolve_addresses(const std::string &name, std::string &error);

// Resolves host (an IP literal in any spelling, or a name) once, checks EVERY address (any
// refused address refuses the whole name: a DNS answer that mixes a public and a private
// address is a rebinding attempt), and returns the checked addresses, so the caller dials
// exactly what was checked and never looks the name up again. A name that is not valid or
// does not resolve is a refusal naming what is wrong or the resolver's error; addresses is
// empty whenever refusal is not. Blocks while getaddrinfo does.
Resolution resolve_checked(std::string_view host, const AddressPolicy &policy,
                           const ResolverOverrides &overrides = {});

}  // namespace sandbox_host::egress
