// Host names made comparable (one spelling per host: lowercase ASCII, punycode, canonical
// IP literals) and the allow list that compares them: a hash lookup for the host, then one
// per parent domain for the wildcard entries.
#include <sandbox_host/egress/destination/host_allow_list.hpp>

#include <boost/algorithm/string/join.hpp>
#include <boost/range/adaptor/transformed.hpp>

#include <sandbox_host/egress/destination/ip_address.hpp>

#include <idn2.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>

namespace sandbox_host::egress {
namespace {

constexpr std::size_t kMaxNameLength = 253;
constexpr std::size_t kMaxLabelLength = 63;
// Longer input is refused before libidn2 sees it. UTS #46 maps some code points to nothing,
// so a valid name may be written longer than 253 bytes, but not this much longer.
constexpr std::size_t kMaxInputBytes = 1024;
constexpr std::size_t kMaxQuotedBytes = 300;
const std::vector<std::uint16_t> kDefaultPorts{80, 443};

// Text for an error message: quoted, control characters escaped, so that a host a client
// sent cannot break a log line.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMaxQuotedBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMaxQuotedBytes) out += "...";
  return out + "\"";
}

[[noreturn]] void bad_name(std::string_view host, const std::string &problem) {
  throw std::invalid_argument("host name " + quoted(host) + " " + problem);
}

[[noreturn]] void bad_character(std::string_view host, char c) {
  bad_name(host, "has a character no host name carries: " + quoted(std::string_view(&c, 1)) +
                     " (names are letters, digits, hyphens and underscores)");
}

struct Idn2Free {
  void operator()(char *text) const { idn2_free(text); }
};

// IDNA processing as curl does it, so that the list and the clients agree on a name.
std::string to_punycode(std::string_view host, const std::string &name) {
  char *out = nullptr;
  const auto *input = reinterpret_cast<const std::uint8_t *>(name.c_str());
  auto **output = reinterpret_cast<std::uint8_t **>(&out);
  int status = idn2_lookup_u8(input, output, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  if (status != IDN2_OK) {
    const int nontransitional = status;
    status = idn2_lookup_u8(input, output, IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
    if (status != IDN2_OK) {
      bad_name(host, std::string("is not a valid internationalised name: ") +
                         idn2_strerror(nontransitional));
    }
  }
  const std::unique_ptr<char, Idn2Free> owned(out);
  return owned.get();
}

bool is_name_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// The number forms a browser takes as an IPv4 part: a host whose last label is one of them
// is an address or nothing.
bool is_number(std::string_view label) {
  if (label.substr(0, 2) == "0x") {
    return std::all_of(label.begin() + 2, label.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  }
  return !label.empty() &&
         std::all_of(label.begin(), label.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void check_dns_name(std::string_view host, std::string_view name) {
  if (name.size() > kMaxNameLength) {
    bad_name(host, "is " + std::to_string(name.size()) + " characters long, more than " +
                       std::to_string(kMaxNameLength));
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, dot - start);
    if (label.empty()) bad_name(host, "has an empty label");
    if (label.size() > kMaxLabelLength) {
      bad_name(host, "has a label of " + std::to_string(label.size()) + " characters, more than " +
                         std::to_string(kMaxLabelLength) + ": " + quoted(label));
    }
    for (char c : label) {
      if (!is_name_character(c)) bad_character(host, c);
    }
    if (label.front() == '-') {
      bad_name(host, "has a label that starts with a hyphen: " + quoted(label));
    }
    if (label.back() == '-') {
      bad_name(host, "has a label that ends with a hyphen: " + quoted(label));
    }
    if (dot == name.size()) {
      if (is_number(label)) bad_name(host, "ends in a number but is not an IPv4 address");
      return;
    }
    start = dot + 1;
  }
}

bool needs_idna(std::string_view name) {
  if (name.substr(0, 4) == "xn--" || name.find(".xn--") != std::string_view::npos) return true;
  return std::any_of(name.begin(), name.end(),
                     [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

struct Host {
  std::string text;
  bool address = false;  // an IP literal in canonical form, not a name
};

Host normalize_host(std::string_view host) {
  if (host.empty()) bad_name(host, "is empty");
  if (host.size() > kMaxInputBytes) {
    bad_name(host, "is " + std::to_string(host.size()) + " bytes long; a host name has at most " +
                       std::to_string(kMaxNameLength) + " characters");
  }
  if (const auto address = parse_ip_literal(host)) return {address->to_string(), true};
  // Checked before libidn2 sees the name: it stops at a NUL and would map what comes before.
  for (char c : host) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) bad_character(host, c);
  }
  std::string name(host);
  if (name.back() == '.') name.pop_back();
  if (name.empty()) bad_name(host, "has no labels");
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  if (needs_idna(name)) {
    name = to_punycode(host, name);
    // UTS #46 maps fullwidth digits and dots to ASCII ones: the name may be an address now.
    if (const auto address = parse_ip_literal(name)) return {address->to_string(), true};
  }
  check_dns_name(host, name);
  return {name, false};
}

std::string describe(const std::vector<std::uint16_t> &ports) {
  return boost::algorithm::join(
      ports | boost::adaptors::transformed([](std::uint16_t port) { return std::to_string(port); }),
      ", ");
}

[[noreturn]] void bad_entry(std::size_t index, std::string_view entry, const std::string &problem) {
  throw EntryError("allow list", index, quoted(entry), problem);
}

std::vector<std::uint16_t> parse_ports(std::size_t index, std::string_view entry,
                                       std::string_view list) {
  std::vector<std::uint16_t> ports;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view text = list.substr(start, comma - start);
    if (text.empty()) bad_entry(index, entry, "has an empty port");
    const bool digits =
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) bad_entry(index, entry, "port " + quoted(text) + " is not a number");
    const unsigned long value = text.size() > 5 ? 65536 : std::stoul(std::string(text));
    if (value == 0 || value > 65535) {
      bad_entry(index, entry, "port " + std::string(text) + " is not between 1 and 65535");
    }
    ports.push_back(static_cast<std::uint16_t>(value));
    if (comma == list.size()) break;
    start = comma + 1;
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

struct ParsedEntry {
  std::string host;  // normalised; for a wildcard, the domain under the "*."
  bool wildcard = false;
  std::vector<std::uint16_t> ports;
};

ParsedEntry parse_entry(std::size_t index, std::string_view entry) {
  if (entry.empty()) bad_entry(index, entry, "is empty");
  // A bare IPv6 literal is all colons; one that takes ports is written in brackets.
  if (const auto address = parse_ip_literal(entry))
    return {address->to_string(), false, kDefaultPorts};
  if (entry.find("://") != std::string_view::npos) {
    bad_entry(index, entry, "is a URL; an entry is a host name or an IP address, with :ports");
  }
  std::string_view host = entry;
  std::optional<std::string_view> ports;
  if (entry.front() == '[') {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) bad_entry(index, entry, "has a \"[\" without \"]\"");
    host = entry.substr(0, close + 1);
    if (!parse_ip_literal(host)) {
      bad_entry(index, entry, "has no IPv6 address between \"[\" and \"]\"");
    }
    if (close + 1 == entry.size() || entry[close + 1] != ':') {
      bad_entry(index, entry, "has something other than \":ports\" after \"]\"");
    }
    ports = entry.substr(close + 2);
  } else if (const auto colon = entry.find(':'); colon != std::string_view::npos) {
    host = entry.substr(0, colon);
    ports = entry.substr(colon + 1);
  }
  ParsedEntry parsed;
  parsed.ports = ports ? parse_ports(index, entry, *ports) : kDefaultPorts;
  if (host == "*") bad_entry(index, entry, "\"*\" alone would allow every host; list them");
  if (host.substr(0, 2) == "*.") {
    parsed.wildcard = true;
    host.remove_prefix(2);
  }
  if (host.find('*') != std::string_view::npos) {
    bad_entry(index, entry,
              "a \"*\" stands only for the subdomains of a name, as the first label of "
              "\"*.example.com\"");
  }
  Host normalised;
  try {
    normalised = normalize_host(host);
  } catch (const std::invalid_argument &e) {
    bad_entry(index, entry, e.what());
  }
  parsed.host = std::move(normalised.text);
  if (parsed.wildcard && normalised.address) {
    bad_entry(index, entry, "a \"*.\" entry covers the subdomains of a name, not an IP address");
  }
  return parsed;
}

}  // namespace

std::string normalize_host_name(std::string_view host) {
  return normalize_host(host).text;
}

std::vector<std::string> HostAllowList::outside(const std::vector<std::string> &entries,
                                                const std::vector<std::string> &domains) {
  std::vector<ParsedEntry> within;
  for (const auto &domain : domains) {
    const bool wildcard = domain.starts_with("*.");
    within.push_back({normalize_host_name(wildcard ? domain.substr(2) : domain), wildcard, {}});
  }
  auto covers = [](const ParsedEntry &domain, const ParsedEntry &entry) {
    if (!domain.wildcard) return !entry.wildcard && entry.host == domain.host;
    const std::string &name = entry.host;
    const bool below = name.size() > domain.host.size() && name.ends_with(domain.host) &&
                       name[name.size() - domain.host.size() - 1] == '.';
    return below || (entry.wildcard && name == domain.host);
  };
  std::vector<std::string> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ParsedEntry entry = parse_entry(i, entries[i]);
    if (std::none_of(within.begin(), within.end(),
                     [&](const ParsedEntry &domain) { return covers(domain, entry); })) {
      out.push_back(entries[i]);
    }
  }
  return out;
}

HostAllowList HostAllowList::parse(const std::vector<std::string> &entries) {
  HostAllowList list;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    ParsedEntry entry = parse_entry(i, entries[i]);
    Rule &rule = (entry.wildcard ? list.wildcard_ : list.exact_)[entry.host];
    rule.push_back({entries[i], std::move(entry.ports)});
  }
  return list;
}

AllowDecision HostAllowList::decide(std::string_view host, std::uint16_t port) const {
  Host normalised;
  try {
    normalised = normalize_host(host);
  } catch (const std::invalid_argument &e) {
    return {false, e.what()};
  }
  const std::string &name = normalised.text;
  // The first rule for the host, when none allows the port, explains the refusal.
  const Rule *host_rule = nullptr;
  const auto allowing = [&](const Rule &rule) -> const Entry * {
    for (const auto &entry : rule) {
      if (std::binary_search(entry.ports.begin(), entry.ports.end(), port)) return &entry;
    }
    if (host_rule == nullptr) host_rule = &rule;
    return nullptr;
  };
  if (const auto exact = exact_.find(name); exact != exact_.end()) {
    if (const Entry *entry = allowing(exact->second)) return {true, entry->text};
  }
  // Every parent domain, nearest first: a.b.example.com looks up b.example.com,
  // example.com and com. An address has no parents.
  for (auto dot = normalised.address ? std::string::npos : name.find('.'); dot != std::string::npos;
       dot = name.find('.', dot + 1)) {
    const auto wildcard = wildcard_.find(std::string_view(name).substr(dot + 1));
    if (wildcard == wildcard_.end()) continue;
    if (const Entry *entry = allowing(wildcard->second)) return {true, entry->text};
  }
  if (host_rule == nullptr) {
    return {false, "no entry for " + name + (empty() ? " (the allow list is empty)" : "")};
  }
  std::string entries;
  for (const auto &entry : *host_rule) {
    entries +=
        (entries.empty() ? "entry " : "; entry ") + entry.text + " allows " + describe(entry.ports);
  }
  return {false,
          "port " + std::to_string(port) + " is not allowed for " + name + " (" + entries + ")"};
}

bool HostAllowList::empty() const {
  return exact_.empty() && wildcard_.empty();
}

}  // namespace sandbox_host::egress
