#include "module_name.hpp"

#include <algorithm>

namespace sandbox_host {

bool is_module_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

std::vector<std::string> read_module_names(const ConfigReader &r, const toml::node &node,
                                           const std::string &key) {
  const std::string allowed = "module names of a-z, 0-9 and -";
  auto names = r.strings(node, key, allowed);
  for (const auto &name : names) {
    if (!is_module_name(name)) {
      r.fail(node.source(), key, "\"" + name + "\" is not a module name; allowed: " + allowed);
    }
  }
  return names;
}

}  // namespace sandbox_host
