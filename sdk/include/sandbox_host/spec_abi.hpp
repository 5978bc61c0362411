// A Spec across the boundary: the host lends an sh_spec built over a Spec, and a module
// reads it back into a Spec. Both walk SH_SPEC_FIELDS (spec_fields.h), one conversion per
// kind of field.
#pragma once

#include <sandbox_host/abi.h>
#include <sandbox_host/spec.hpp>
#include <sandbox_host/strings.hpp>

#include <cstddef>
#include <cstdint>
#include <list>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host {

// The sh_spec members of one field (a VIEW field has two), and the last of them.
#define SH_SPEC_RAW_STRING(raw, name) raw.name
#define SH_SPEC_RAW_NETWORK(raw, name) raw.name
#define SH_SPEC_RAW_STRINGS(raw, name) raw.name
#define SH_SPEC_RAW_PORT(raw, name) raw.name
#define SH_SPEC_RAW_VIEW(raw, name) raw.name, raw.name##_count
#define SH_SPEC_RAW_LIMITS(raw, name) raw.name
#define SH_SPEC_RAW_BYTES(raw, name) raw.name
#define SH_SPEC_LAST_STRING(name) name
#define SH_SPEC_LAST_NETWORK(name) name
#define SH_SPEC_LAST_STRINGS(name) name
#define SH_SPEC_LAST_PORT(name) name
#define SH_SPEC_LAST_VIEW(name) name##_count
#define SH_SPEC_LAST_LIMITS(name) name
#define SH_SPEC_LAST_BYTES(name) name
// Where a field ends in sh_spec: a reader touches it only when struct_size reaches that far.
#define SH_SPEC_END(kind, name) \
  (offsetof(sh_spec, SH_SPEC_LAST_##kind(name)) + sizeof(sh_spec::SH_SPEC_LAST_##kind(name)))

namespace spec_abi {

// Where the fields of ABI 1.0 end: a smaller sh_spec is not one.
constexpr std::size_t first_fields_end() {
  std::size_t end = 0;
#define SH_SPEC_FIRST_END(kind, name, since) \
  if (since == 0 && SH_SPEC_END(kind, name) > end) end = SH_SPEC_END(kind, name);
  SH_SPEC_FIELDS(SH_SPEC_FIRST_END)
#undef SH_SPEC_FIRST_END
  return end;
}

inline void read_field(const char *, std::string &out, sh_str raw) {
  out = to_view(raw);
}

inline void read_field(const char *name, std::vector<std::string> &out, sh_str_list raw) {
  if (raw.count > 0 && raw.items == nullptr) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" has count " +
                                std::to_string(raw.count) + " and no array");
  }
  out = to_strings(raw);
}

inline void read_field(const char *, Network &out, sh_str raw) {
  out = parse_network_or_throw(to_view(raw), "spec");
}

inline void read_field(const char *name, std::uint16_t &out, uint32_t raw) {
  if (raw > UINT16_MAX) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" is " +
                                std::to_string(raw) + ", not a port (0 to 65535)");
  }
  out = static_cast<std::uint16_t>(raw);
}

inline void read_field(const char *name, std::vector<PathRule> &out, const sh_path_rule *rules,
                       size_t count) {
  if (count > 0 && rules == nullptr) {
    throw std::invalid_argument(std::string("spec: field \"") + name + "\" has count " +
                                std::to_string(count) + " and no array");
  }
  out.clear();
  for (size_t i = 0; i < count; ++i) {
    if (rules[i].access > SH_ACCESS_WRITE) {
      throw std::invalid_argument(std::string("spec: ") + name + "[" + std::to_string(i) +
                                  "] has unknown access " + std::to_string(rules[i].access));
    }
    out.push_back({std::string(to_view(rules[i].path)), static_cast<PathAccess>(rules[i].access)});
  }
}

inline void read_field(const char *, std::uint64_t &out, uint64_t raw) {
  out = raw;
}

inline void read_field(const char *, Limits &out, const sh_limits &raw) {
#define SH_LIMITS_READ(name, default_value) out.name = raw.name;
  SH_LIMITS_FIELDS(SH_LIMITS_READ)
#undef SH_LIMITS_READ
}

}  // namespace spec_abi

// Borrows spec's strings: spec must outlive this view and stay unchanged.
class SpecAbiView {
 public:
  explicit SpecAbiView(const Spec &spec) {
    raw_.struct_size = sizeof(sh_spec);
#define SH_SPEC_LEND(kind, name, since) lend(spec.name, SH_SPEC_RAW_##kind(raw_, name));
    SH_SPEC_FIELDS(SH_SPEC_LEND)
#undef SH_SPEC_LEND
  }
  SpecAbiView(const SpecAbiView &) = delete;
  SpecAbiView &operator=(const SpecAbiView &) = delete;

  const sh_spec *get() const noexcept {
    return &raw_;
  }

 private:
  static void lend(const std::string &value, sh_str &out) {
    out = to_sh_str(value);
  }
  static void lend(Network value, sh_str &out) {
    out = to_sh_str(to_string(value));
  }
  static void lend(std::uint16_t value, uint32_t &out) {
    out = value;
  }
  static void lend(std::uint64_t value, uint64_t &out) {
    out = value;
  }
  void lend(const std::vector<std::string> &values, sh_str_list &out) {
    std::vector<sh_str> &items = lists_.emplace_back();
    items.reserve(values.size());
    for (const auto &value : values) items.push_back(to_sh_str(value));
    out = {items.data(), items.size()};
  }
  void lend(const std::vector<PathRule> &values, const sh_path_rule *&out, size_t &count) {
    std::vector<sh_path_rule> &rules = rule_lists_.emplace_back();
    rules.reserve(values.size());
    for (const auto &rule : values) {
      rules.push_back({to_sh_str(rule.path), static_cast<uint32_t>(rule.access)});
    }
    out = rules.data();
    count = rules.size();
  }
  static void lend(const Limits &value, sh_limits &out) {
#define SH_LIMITS_LEND(name, default_value) out.name = value.name;
    SH_LIMITS_FIELDS(SH_LIMITS_LEND)
#undef SH_LIMITS_LEND
  }

  // std::list: a list's items stay where they are while later fields add theirs.
  std::list<std::vector<sh_str>> lists_;
  std::list<std::vector<sh_path_rule>> rule_lists_;
  sh_spec raw_{};
};

// A field appended to sh_spec after ABI 1.0 is read only where struct_size has it, and keeps
// its default where not.
inline Spec from_abi(const sh_spec &raw) {
  if (raw.struct_size < spec_abi::first_fields_end()) {
    throw std::invalid_argument("spec: struct too small");
  }
  Spec spec;
#define SH_SPEC_READ(kind, name, since)           \
  if (raw.struct_size >= SH_SPEC_END(kind, name)) \
    spec_abi::read_field(#name, spec.name, SH_SPEC_RAW_##kind(raw, name));
  SH_SPEC_FIELDS(SH_SPEC_READ)
#undef SH_SPEC_READ
  return spec;
}

}  // namespace sandbox_host
