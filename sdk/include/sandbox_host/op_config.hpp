// A module's own settings: an operation's [ops.<name>] table, or an egress module's
// [egress.<name>] table, as the host hands it to the module when it creates the instance
// (HostInfo::config).
#pragma once

#include <sandbox_host/abi.h>
#include <sandbox_host/strings.hpp>

#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host {

class OpConfig {
 public:
  OpConfig() = default;
  // table is the dotted name of the config table, for messages: "ops.<op>" when empty.
  OpConfig(std::string op, std::vector<std::pair<std::string, std::vector<std::string>>> entries,
           std::string table = {})
      : op_(std::move(op)),
        table_(table.empty() ? "ops." + op_ : std::move(table)),
        entries_(std::move(entries)) {}

  // What the host handed over; op is the module's name, for messages.
  static OpConfig from_abi(std::string op, const sh_config &raw, std::string table = {}) {
    std::vector<std::pair<std::string, std::vector<std::string>>> entries;
    for (size_t i = 0; i < raw.count; ++i) {
      entries.emplace_back(std::string(to_view(raw.entries[i].key)),
                           to_strings(raw.entries[i].values));
    }
    return OpConfig(std::move(op), std::move(entries), std::move(table));
  }

  const std::string &op() const noexcept { return op_; }
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // A key written as one value; nullopt when absent. Throws for an array of another length.
  std::optional<std::string> value(std::string_view key) const {
    const auto *values = find(key);
    if (values == nullptr) return std::nullopt;
    if (values->size() != 1) throw error(key, "must be one value, not an array");
    return values->front();
  }

  // A key written as an array (or one value); empty when absent.
  std::vector<std::string> values(std::string_view key) const {
    const auto *values = find(key);
    return values == nullptr ? std::vector<std::string>{} : *values;
  }

  // Refuses every key not in allowed, naming it and the allowed ones.
  void allow_only(std::initializer_list<std::string_view> allowed) const {
    for (const auto &[key, values] : entries_) {
      bool known = false;
      for (auto name : allowed) known = known || name == key;
      if (known) continue;
      std::string list;
      for (auto name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
      throw error(key, "unknown key; allowed: " + (list.empty() ? std::string("none") : list));
    }
  }

  // "<table>.<key>: <what>" (ops.<op>.<key>), the way the host names config keys.
  std::invalid_argument error(std::string_view key, std::string_view what) const {
    return std::invalid_argument(table_ + "." + std::string(key) + ": " + std::string(what));
  }

 private:
  const std::vector<std::string> *find(std::string_view key) const {
    for (const auto &[name, values] : entries_) {
      if (name == key) return &values;
    }
    return nullptr;
  }

  std::string op_;
  std::string table_;
  std::vector<std::pair<std::string, std::vector<std::string>>> entries_;
};

}  // namespace sandbox_host
