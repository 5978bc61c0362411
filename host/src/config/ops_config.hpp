// The [ops] table: which operation modules load, and each one's [ops.<name>] table, whose
// keys but requester_env are the module's own: the host checks only their form and hands
// them on as text, in the file's order.
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>

#include <toml++/toml.h>

#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {

void read_ops(const ConfigReader &r, const toml::table &t, Config &config);

// A module's own table read as an [ops.<name>] table is, without requester_env (an egress
// module has no requester); prefix is the table's dotted name.
std::vector<std::pair<std::string, std::vector<std::string>>> read_module_entries(
    const ConfigReader &r, const toml::table &t, const std::string &prefix);

}  // namespace sandbox_host
