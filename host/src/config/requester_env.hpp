// [ops.<name>] requester_env: the variables of a requester's environment the broker hands
// an operation. The requester chooses their values, so names that change how a host
// command runs rather than carry data to it are refused at load.
#pragma once

#include "config_reader.hpp"

#include <toml++/toml.h>

#include <string>
#include <vector>

namespace sandbox_host {

// The names at node; a bad or refused one is named key[i], at its own line.
std::vector<std::string> requester_env_names(const ConfigReader &r, const toml::node &node,
                                             const std::string &key);

}  // namespace sandbox_host
