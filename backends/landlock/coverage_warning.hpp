// Availability.Warning for Landlock: what it does not cover on a kernel of a given ABI,
// against the namespaces backend. Generated from the ABI found, item by item.
#pragma once

#include <string>

namespace sandbox_host::landlock {

std::string coverage_warning(int abi);

}  // namespace sandbox_host::landlock
