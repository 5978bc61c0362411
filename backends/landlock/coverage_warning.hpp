// Availability.Warning for Landlock: what it does not cover on a kernel of a given ABI,
// against the namespaces backend, one gap at a time (sandbox_host/coverage_gaps.hpp has the
// form `sandbox-host probe` reads the list from). Generated from the ABI found.
#pragma once

#include <sandbox_host/coverage_gaps.hpp>

#include <string>
#include <vector>

namespace sandbox_host::landlock {

// Each gap: what it lets a plugin do (or keeps from it), and what closes it.
std::vector<CoverageGap> coverage_gaps(int abi);

// "degraded: Landlock ABI <abi> without namespaces; not covered: <gap>; <gap>; ...".
std::string coverage_warning(int abi);

}  // namespace sandbox_host::landlock
