// The cgroup v2 driver: a slice is a directory under the parent with memory.max and
// memory.swap.max, a scope a directory in it that the requester is moved into through
// cgroup.procs. The memory controller must reach them: each level enables it in its
// cgroup.subtree_control, which it can only where its own cgroup.controllers lists it.
#include "cgroup_dirs.hpp"
#include "drivers.hpp"

#include <sandbox_host/cgroup_mounts.hpp>

#include <sstream>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::cap {
namespace fs = std::filesystem;

namespace {

// Lets the children of dir have the memory controller.
void enable_memory_below(const fs::path &dir) {
  const std::string available = read_control(dir / "cgroup.controllers");
  if (!cgroup::lists(available, "memory")) {
    throw std::runtime_error(
        "cgroup2: the memory controller is missing in " + dir.string() +
        " (its cgroup.controllers: " + (available.empty() ? std::string("none") : available) +
        "); enable memory in the cgroup.subtree_control of every cgroup above it, or use the "
        "cgroup1 or systemd driver where memory lives there");
  }
  if (!cgroup::lists(read_control(dir / "cgroup.subtree_control"), "memory")) {
    write_control(dir / "cgroup.subtree_control", "+memory");
  }
}

std::string v2_limit(const MemoryLimit &limit) {
  return limit ? std::to_string(*limit) : "max";
}

class Cgroup2Driver final : public CapDriver {
 public:
  explicit Cgroup2Driver(fs::path parent) : dirs_(std::move(parent)) {}

  void cap_slice(const MemoryCap &cap) override {
    const bool limited = cap.max || cap.swap;
    if (limited) enable_memory_below(dirs_.parent());
    set_limits(dirs_.slice(cap.slice), cap);
  }

  void enter_scope(const MemoryCap &cap, const std::string &unit, int requester_pidfd) override {
    const auto held = dirs_.lock_scopes();
    const bool limited = cap.max || cap.swap;
    if (limited) enable_memory_below(dirs_.parent());
    const fs::path slice = dirs_.slice(cap.slice);
    if (limited) enable_memory_below(slice);
    const fs::path scope = dirs_.new_scope(slice, unit);
    set_limits(scope, cap);
    dirs_.move(scope, requester_pidfd);
  }

  std::string describe() const override {
    return "cgroup2 (parent " + dirs_.parent().string() + ")";
  }

 private:
  // An unlimited cap needs no controller: where memory.max is missing, nothing limits the
  // cgroup anyway.
  static void set_limits(const fs::path &dir, const MemoryCap &cap) {
    std::error_code ec;
    for (const auto &[file, limit, what] : {std::tuple{"memory.max", cap.max, "memory"},
                                            std::tuple{"memory.swap.max", cap.swap, "swap"}}) {
      if (fs::exists(dir / file, ec)) {
        write_control(dir / file, v2_limit(limit));
      } else if (limit) {
        throw std::runtime_error(
            "cgroup2: " + dir.string() + " has no " + file + ", so its " + what +
            " cannot be capped" +
            (std::string(what) == "swap" ? " (the kernel accounts no swap: swapaccount)" : ""));
      }
    }
  }

  CgroupDirs dirs_;
};

}  // namespace

std::unique_ptr<CapDriver> make_cgroup2_driver(fs::path parent) {
  return std::make_unique<Cgroup2Driver>(std::move(parent));
}

}  // namespace sandbox_host::cap
