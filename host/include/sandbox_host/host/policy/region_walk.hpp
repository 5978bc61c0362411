// A region the policy denies apart from paths it re-allows (home, runtime), cut into the
// paths a managed deny rule may name: Claude Code's rules cannot say "all but these", and a
// deny rule wins over every allow, so the region is listed as it is now and each entry that
// holds nothing re-allowed is named, the way to a re-allowed path descended.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace sandbox_host::policy {

// How much of a region is listed; past either bound the rest stays open, and a line says so.
struct WalkBounds {
  // Levels of directories listed, the region's own entries the first. The walk descends only
  // toward re-allowed paths and never through a symlink, so only an entry this deep reaches it.
  std::size_t depth = 32;
  // Entries listed in all: each denied one becomes four rules in every session's settings.
  std::size_t entries = 4096;
};

struct RegionWalk {
  // Paths to deny, each with everything below it: the region itself when it holds nothing
  // re-allowed; else its entries that hold nothing re-allowed, in name order, a directory on
  // the way to one listed in turn. Never one the policy re-allows or that holds one.
  std::vector<std::string> closed;
  // One line for each part left open to a session without hooks, and why: a symlink or a
  // file on the way to a re-allowed entry (not followed), a directory that cannot be listed,
  // a bound hit, and whatever is made in the region after the walk.
  std::vector<std::string> open;
};

// region named by what it is ("home", "runtime") in the lines; "" walks nothing. Symlinks
// are not followed: a symlink entry is denied as itself, unless it leads to a re-allowed
// path.
RegionWalk walk_region(const Policy &policy, const std::string &what, const std::string &region,
                       const WalkBounds &bounds = {});

}  // namespace sandbox_host::policy
