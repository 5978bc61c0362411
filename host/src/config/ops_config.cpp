#include "ops_config.hpp"

#include "module_name.hpp"
#include "requester_env.hpp"
#include "toml_type_name.hpp"

#include <algorithm>
#include <optional>

namespace sandbox_host {
namespace {

// A key of an [ops.<name>] table: 1 or more of a-z, 0-9, _ and -.
bool valid_op_key(std::string_view key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::optional<std::string> scalar_text(const toml::node &node) {
  if (const auto *s = node.as_string()) return s->get();
  if (const auto *i = node.as_integer()) return std::to_string(i->get());
  if (const auto *b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
  return std::nullopt;
}

// An operation's setting: a string, integer or boolean, or an array of them, as text.
std::vector<std::string> op_values(const ConfigReader &r, const toml::node &node,
                                   const std::string &key) {
  const auto *array = node.as_array();
  if (array == nullptr) {
    auto text = scalar_text(node);
    if (!text) {
      r.fail(node.source(), key,
             std::string("must be a string, integer or boolean, or an array of them, not ") +
                 toml_type_name(node));
    }
    return {*text};
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < array->size(); ++i) {
    const toml::node &element = *array->get(i);
    auto text = scalar_text(element);
    if (!text) {
      r.fail(element.source(), key + "[" + std::to_string(i) + "]",
             std::string("must be a string, integer or boolean, not ") + toml_type_name(element));
    }
    out.push_back(*text);
  }
  return out;
}

// One [ops.<name>] table. Its keys are the module's own, but for requester_env.
OpSettings read_op(const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  // toml++ iterates a table in key order; the module gets the keys in the file's order.
  std::vector<std::pair<const toml::key *, const toml::node *>> items;
  for (auto &&[key, node] : t) items.emplace_back(&key, &node);
  std::sort(items.begin(), items.end(), [](const auto &a, const auto &b) {
    const auto &x = a.first->source().begin;
    const auto &y = b.first->source().begin;
    return x.line != y.line ? x.line < y.line : x.column < y.column;
  });
  OpSettings op;
  for (const auto &[key, node] : items) {
    std::string name(key->str());
    std::string dotted = prefix + "." + key_part(name);
    if (name == "requester_env") {
      op.requester_env = requester_env_names(r, *node, dotted);
    } else if (!valid_op_key(name)) {
      r.fail(key->source(), dotted,
             "\"" + name + "\" is not a key of an operation; allowed: a-z, 0-9, _ and -");
    } else {
      op.entries.emplace_back(name, op_values(r, *node, dotted));
    }
  }
  return op;
}

}  // namespace

void read_ops(const ConfigReader &r, const toml::table &t, Config &config) {
  // ops.enabled may follow the operations' tables in the file, or keep its default: the
  // tables are checked against it once it is known.
  if (const auto *enabled = t.get("enabled")) {
    config.ops_enabled = read_module_names(r, *enabled, "ops.enabled");
  }
  for (auto &&[key, node] : t) {
    std::string name(key.str());
    if (name == "enabled") continue;
    std::string dotted = "ops." + key_part(name);
    bool enabled = std::find(config.ops_enabled.begin(), config.ops_enabled.end(), name) !=
                   config.ops_enabled.end();
    if (!node.is_table()) {
      if (enabled) r.table(node, dotted);  // refuses it, naming its type
      r.unknown(key, dotted, "enabled, [ops.<name>] tables of enabled operations");
    }
    if (!is_module_name(name)) {
      r.fail(key.source(), dotted,
             "\"" + name + "\" is not a module name; allowed: module names of a-z, 0-9 and -");
    }
    if (!enabled) {
      r.fail(key.source(), dotted, "not in ops.enabled; enable it there or remove the table");
    }
    config.op_settings[name] = read_op(r, *node.as_table(), dotted);
  }
}

std::vector<std::pair<std::string, std::vector<std::string>>> read_module_entries(
    const ConfigReader &r, const toml::table &t, const std::string &prefix) {
  if (const auto *env = t.get("requester_env")) {
    r.fail(env->source(), prefix + ".requester_env",
           "is a key of an operation's table; this module has no requester whose variables "
           "it could take");
  }
  return read_op(r, t, prefix).entries;
}

}  // namespace sandbox_host
