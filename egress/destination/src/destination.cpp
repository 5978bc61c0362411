// The destination rules (destination.hpp): the operator's allowed blocks, the proxy's own
// addresses, the special-purpose ranges, and one checked resolution per connection.
#include <sandbox_host/egress/destination/destination.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/range/adaptor/transformed.hpp>

#include <sandbox_host/egress/destination/host_allow_list.hpp>

#include <netdb.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace sandbox_host::egress {
namespace {

constexpr const char *kAllowHint = "allow it with [egress] allow_addresses";

[[noreturn]] void bad_block(std::size_t index, const std::string &entry,
                            const std::string &problem) {
  throw EntryError("allow_addresses", index, "\"" + entry + "\"", problem);
}

int full_length(const IpAddress &address) {
  return address.family == AF_INET ? 32 : 128;
}

// address with the bits past prefix_length cleared: the block it is in.
IpAddress network_of(IpAddress address, int prefix_length) {
  for (int bit = prefix_length; bit < full_length(address); ++bit) {
    address.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
  }
  return address;
}

struct AddrinfoFree {
  void operator()(addrinfo *list) const { ::freeaddrinfo(list); }
};

}  // namespace

std::vector<IpAddress> resolve_addresses(const std::string &name, std::string &error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  const int status = ::getaddrinfo(name.c_str(), nullptr, &hints, &found);
  const std::unique_ptr<addrinfo, AddrinfoFree> list(found);
  if (status != 0) {
    error = status == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(status);
    return {};
  }
  std::vector<IpAddress> addresses;
  for (const addrinfo *entry = list.get(); entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family != AF_INET && entry->ai_family != AF_INET6) continue;
    const IpAddress address = IpAddress::from_sockaddr(entry->ai_addr);
    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
      addresses.push_back(address);
    }
  }
  if (addresses.empty()) error = "no IPv4 or IPv6 address";
  return addresses;
}

namespace {

std::string listed(const std::vector<IpAddress> &addresses) {
  return boost::algorithm::join(
      addresses | boost::adaptors::transformed(
                      [](const IpAddress &address) { return address.to_string(); }),
      ", ");
}

}  // namespace

AddressPolicy AddressPolicy::parse(const std::vector<std::string> &allowed) {
  AddressPolicy policy;
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    const std::string &entry = allowed[i];
    if (entry.empty()) bad_block(i, entry, "is empty");
    const auto slash = entry.find('/');
    const std::string address_text = entry.substr(0, slash);
    if (address_text.find('%') != std::string::npos) {
      bad_block(i, entry, "a zone id has no place in an address block");
    }
    const auto address = parse_ip_literal(address_text);
    if (!address) bad_block(i, entry, "\"" + address_text + "\" is not an IP address");
    const int full = full_length(*address);
    int length = full;
    if (slash != std::string::npos) {
      const std::string length_text = entry.substr(slash + 1);
      const bool digits = !length_text.empty() && length_text.size() <= 3 &&
                          std::all_of(length_text.begin(), length_text.end(),
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoi(length_text) > full) {
        bad_block(i, entry,
                  "prefix length \"" + length_text + "\" is not a number from 0 to " +
                      std::to_string(full));
      }
      length = std::stoi(length_text);
    }
    if (const IpAddress network = network_of(*address, length); network != *address) {
      bad_block(i, entry,
                "has bits set past the prefix length; the block is " + network.to_string() + "/" +
                    std::to_string(length));
    }
    policy.allowed_.push_back({*address, length});
  }
  return policy;
}

void AddressPolicy::add_own(const IpAddress &address) {
  const IpAddress own = unmapped_ipv4(address).value_or(address);
  if (std::find(own_.begin(), own_.end(), own) == own_.end()) own_.push_back(own);
}

bool AddressPolicy::allows(const IpAddress &address) const {
  return std::any_of(allowed_.begin(), allowed_.end(), [&](const Block &block) {
    return in_block(address, block.network, block.prefix_length);
  });
}

bool AddressPolicy::names_alone(const IpAddress &address) const {
  return std::any_of(allowed_.begin(), allowed_.end(), [&](const Block &block) {
    return block.network == address && block.prefix_length == full_length(address);
  });
}

std::optional<std::string> AddressPolicy::refusal(const IpAddress &address) const {
  // A dual-stack socket dials ::ffff:a.b.c.d as a.b.c.d: the same rules hold for both.
  const auto unmapped = unmapped_ipv4(address);
  const IpAddress &dialled = unmapped ? *unmapped : address;
  const std::string text = address.to_string();
  if (std::find(own_.begin(), own_.end(), dialled) != own_.end()) {
    if (names_alone(address) || names_alone(dialled)) return std::nullopt;
    return text + " is this proxy's own address; " + kAllowHint + " \"" + dialled.to_string() +
           "\" (a block that holds it is not enough)";
  }
  if (allows(address) || allows(dialled)) return std::nullopt;
  if (const auto range = special_range(address)) return text + " is " + *range + "; " + kAllowHint;
  return std::nullopt;
}

Resolution resolve_checked(std::string_view host, const AddressPolicy &policy,
                           const ResolverOverrides &overrides) {
  std::string name;
  try {
    name = normalize_host_name(host);
  } catch (const std::invalid_argument &e) {
    return {{}, e.what()};
  }
  if (const auto address = parse_ip_literal(name)) {
    if (auto refusal = policy.refusal(*address)) {
      const bool respelled = host != name;
      return {{}, respelled ? std::string(host) + " is " + name + ": " + *refusal : *refusal};
    }
    return {{*address}, {}};
  }
  std::vector<IpAddress> addresses;
  std::string how;
  if (const auto mapped = overrides.find(name); mapped != overrides.end()) {
    if (mapped->second.empty()) {
      return {{}, "the resolver overrides map " + name + " to no address"};
    }
    addresses = mapped->second;
    how = " is mapped by the resolver overrides to ";
  } else {
    std::string error;
    addresses = resolve_addresses(name, error);
    if (!error.empty()) return {{}, name + " does not resolve: " + error};
    how = " resolves to ";
  }
  for (const auto &address : addresses) {
    if (auto refusal = policy.refusal(address)) {
      std::string why = name + how + listed(addresses) + ": " + *refusal;
      if (addresses.size() > 1) why += " (one refused address refuses the whole name)";
      return {{}, std::move(why)};
    }
  }
  return {std::move(addresses), {}};
}

}  // namespace sandbox_host::egress
