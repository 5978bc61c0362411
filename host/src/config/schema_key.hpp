// One key of a config table as data: what docs/config.md shows of it and how its value
// fills its section. Each table's keys are one array beside that table's reader; read_keys
// walks it, and an unknown key's error lists the allowed ones from it, so that a key is
// added, documented and accepted in one place.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config_schema.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sandbox_host {

template <typename Section>
struct SchemaKey {
  ConfigKeyDoc doc;
  // Reads node, the key's value named dotted, into section; doc gives the bounds.
  void (*read)(const ConfigReader &r, const toml::node &node, const std::string &dotted,
               const ConfigKeyDoc &doc, Section &section);
};

template <typename>
struct MemberOf;
template <typename Section, typename Value>
struct MemberOf<Value Section::*> {
  using section = Section;
  using value = Value;
};

// An integer in [min, max] that fills Member as its type takes it: a count, or a duration
// in the member's own unit (tick_ms fills milliseconds, renew_every_s seconds).
template <auto Member>
constexpr SchemaKey<typename MemberOf<decltype(Member)>::section> integer_key(
    std::string_view name, std::string_view default_value, std::int64_t min, std::int64_t max,
    std::string_view what) {
  using Section = typename MemberOf<decltype(Member)>::section;
  using Value = typename MemberOf<decltype(Member)>::value;
  return {{name, "integer", default_value, std::pair{min, max}, what},
          [](const ConfigReader &r, const toml::node &node, const std::string &dotted,
             const ConfigKeyDoc &doc, Section &section) {
            section.*Member = Value(r.integer(node, dotted, doc.bounds->first, doc.bounds->second));
          }};
}

template <auto Member>
constexpr SchemaKey<typename MemberOf<decltype(Member)>::section> boolean_key(
    std::string_view name, std::string_view default_value, std::string_view what) {
  using Section = typename MemberOf<decltype(Member)>::section;
  return {
      {name, "boolean", default_value, std::nullopt, what},
      [](const ConfigReader &r, const toml::node &node, const std::string &dotted,
         const ConfigKeyDoc &, Section &section) { section.*Member = r.boolean(node, dotted); }};
}

// "a, b, c": the keys an unknown key's error allows, in the table's order.
template <typename Keys>
std::string allowed_keys(const Keys &keys) {
  std::string out;
  for (const auto &key : keys) out += (out.empty() ? "" : ", ") + std::string(key.doc.name);
  return out;
}

// The keys' docs in order: ConfigKeyDocs, or LimitKeyDocs for the bounds of [limits].
template <typename Keys>
auto key_docs(const Keys &keys) {
  std::vector<std::remove_cvref_t<decltype(std::begin(keys)->doc)>> out;
  for (const auto &key : keys) out.push_back(key.doc);
  return out;
}

// Reads every key of t into section by its entry of keys; a key keys lacks is refused,
// naming the allowed ones. prefix is t's dotted name ("" at the file's top level).
template <typename Keys, typename Section>
void read_keys(const ConfigReader &r, const toml::table &t, const std::string &prefix,
               const Keys &keys, Section &section) {
  for (auto &&[key, node] : t) {
    const std::string name(key.str());
    const std::string dotted = prefix.empty() ? name : prefix + "." + name;
    const auto entry = std::find_if(std::begin(keys), std::end(keys),
                                    [&](const auto &k) { return k.doc.name == name; });
    if (entry == std::end(keys)) r.unknown(key, dotted, allowed_keys(keys));
    entry->read(r, node, dotted, entry->doc, section);
  }
}

}  // namespace sandbox_host
