// The three drivers behind CapDriver (cap_driver.hpp), made by make_driver once it checked
// their settings.
#pragma once

#include "cap_driver.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace sandbox_host::cap {

// parent: a canonical cgroup v2 directory.
std::unique_ptr<CapDriver> make_cgroup2_driver(std::filesystem::path parent);
// parent: a canonical directory of the cgroup v1 memory hierarchy.
std::unique_ptr<CapDriver> make_cgroup1_driver(std::filesystem::path parent);
// parent: the slice the slots live under; bus: an address, "system", "user", or nullopt
// for the broker's own manager (the system bus as root, else the user's).
std::unique_ptr<CapDriver> make_systemd_driver(std::string parent, std::optional<std::string> bus);

}  // namespace sandbox_host::cap
