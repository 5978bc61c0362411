// The cgroup v1 driver, for hosts whose memory controller is still on v1: a slice is a
// directory of the memory hierarchy under the parent, a scope a directory in it. v1 caps
// memory (memory.limit_in_bytes) and memory + swap together (memory.memsw.limit_in_bytes),
// so swap max becomes memsw = max + swap, and the kernel wants memsw >= limit at every
// moment, which decides the order of the two writes.
#include "cgroup_dirs.hpp"
#include "drivers.hpp"

#include <cstdint>
#include <stdexcept>
#include <system_error>

namespace sandbox_host::cap {
namespace fs = std::filesystem;

namespace {

constexpr const char *kLimit = "memory.limit_in_bytes";
constexpr const char *kMemsw = "memory.memsw.limit_in_bytes";

// -1 is v1's "no limit", which the kernel reads back as its largest page-aligned number.
std::string v1_limit(const MemoryLimit &limit) {
  return limit ? std::to_string(*limit) : "-1";
}

class Cgroup1Driver final : public CapDriver {
 public:
  explicit Cgroup1Driver(fs::path parent) : dirs_(std::move(parent)) {}

  void cap_slice(const MemoryCap &cap) override { set_limits(dirs_.slice(cap.slice), cap); }

  void enter_scope(const MemoryCap &cap, const std::string &unit, int requester_pidfd) override {
    const auto held = dirs_.lock_scopes();
    const fs::path scope = dirs_.new_scope(dirs_.slice(cap.slice), unit);
    set_limits(scope, cap);
    dirs_.move(scope, requester_pidfd);
  }

  std::string describe() const override {
    return "cgroup1 (parent " + dirs_.parent().string() + ")";
  }

 private:
  static void set_limits(const fs::path &dir, const MemoryCap &cap) {
    const MemoryLimit memsw =
        cap.max && cap.swap ? MemoryLimit(*cap.max + *cap.swap) : std::nullopt;
    std::error_code ec;
    if (!fs::exists(dir / kMemsw, ec)) {
      if (cap.swap) {
        throw std::runtime_error("cgroup1: " + dir.string() + " has no " + kMemsw +
                                 ", so its swap cannot be capped (the kernel accounts no swap: "
                                 "boot with swapaccount=1)");
      }
      write_control(dir / kLimit, v1_limit(cap.max));
      return;
    }
    // Raising the limit above the memsw in force must raise memsw first; lowering it,
    // the limit goes first.
    const std::uint64_t memsw_now = std::stoull(read_control(dir / kMemsw));
    const std::uint64_t limit_new = cap.max ? *cap.max : UINT64_MAX;
    if (limit_new > memsw_now) {
      write_control(dir / kMemsw, v1_limit(memsw));
      write_control(dir / kLimit, v1_limit(cap.max));
    } else {
      write_control(dir / kLimit, v1_limit(cap.max));
      write_control(dir / kMemsw, v1_limit(memsw));
    }
  }

  CgroupDirs dirs_;
};

}  // namespace

std::unique_ptr<CapDriver> make_cgroup1_driver(fs::path parent) {
  return std::make_unique<Cgroup1Driver>(std::move(parent));
}

}  // namespace sandbox_host::cap
