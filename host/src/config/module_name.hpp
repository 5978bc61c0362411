// Module names (backends, operations, egress modules): 1 to 64 of a-z, 0-9 and -, not
// starting with -, since each names a file <kind>_<name>.so and appears in messages.
#pragma once

#include "config_reader.hpp"

#include <toml++/toml.h>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

bool is_module_name(std::string_view name);

// An array of module names at node; a bad one is refused, naming key.
std::vector<std::string> read_module_names(const ConfigReader &r, const toml::node &node,
                                           const std::string &key);

}  // namespace sandbox_host
