// The [limits] and [plugins.<name>.limits] tables: one launch's bounds, each key a bound of
// the process (rlimits, tmpfs sizes), of its cgroup or of the host's watch (kLimitKeys).
#pragma once

#include "config_reader.hpp"

#include <sandbox_host/host/config.hpp>

#include <toml++/toml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {

void set_limit(LaunchLimits &limits, const LimitField &field, std::uint64_t value);

// The bounds t sets, in file order; prefix is its dotted name. cgroup is where [limits]'s
// cgroup key goes; null for a plugin's table, which may not set it.
std::vector<std::pair<LimitField, std::uint64_t>> read_limits(const ConfigReader &r,
                                                              const toml::table &t,
                                                              const std::string &prefix,
                                                              std::string *cgroup = nullptr);

}  // namespace sandbox_host
