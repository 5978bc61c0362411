// What the two cgroupfs drivers share: slices and scopes as directories under the
// configured parent (<parent>/<slice>/<unit>), the control files they write, and the move
// of the pinned requester into a scope's cgroup.procs.
#pragma once

#include <sandbox_host/cgroup_control.hpp>

#include <filesystem>
#include <mutex>
#include <string>

namespace sandbox_host::cap {

using cgroup::read_control;
using cgroup::write_control;

class CgroupDirs {
 public:
  explicit CgroupDirs(std::filesystem::path parent) : parent_(std::move(parent)) {}
  const std::filesystem::path &parent() const noexcept { return parent_; }

  // <parent>/<slice>, made if missing. slice was checked: no "/" and no "..".
  std::filesystem::path slice(const std::string &slice) const;
  // <slice_dir>/<unit>, made; one left empty by an earlier run is taken again, one that
  // holds processes is refused, as systemd refuses a unit that exists.
  std::filesystem::path new_scope(const std::filesystem::path &slice_dir,
                                  const std::string &unit) const;
  // Moves the process requester_pidfd names into scope (its cgroup.procs).
  void move(const std::filesystem::path &scope, int requester_pidfd) const;

  // Held while a scope is made and filled, so that two requests for one unit cannot both
  // find it empty.
  std::unique_lock<std::mutex> lock_scopes() const { return std::unique_lock(scopes_); }

 private:
  std::filesystem::path parent_;
  mutable std::mutex scopes_;
};

}  // namespace sandbox_host::cap
