// A way to cap a slot's memory (cap_driver_choice.hpp names the three): the one interface
// cap-slot and scope call, made once when their module is created.
#pragma once

#include "cap_driver_choice.hpp"
#include "memory_cap.hpp"

#include <sandbox_host/op_config.hpp>

#include <memory>
#include <string>

namespace sandbox_host::cap {

class CapDriver {
 public:
  virtual ~CapDriver() = default;
  // Sets the slice's memory max and swap max, making the slice if it does not exist.
  // Throws with what failed.
  virtual void cap_slice(const MemoryCap &cap) = 0;
  // Moves the process that requester_pidfd names, and only it, into a new scope `unit` of
  // cap.slice whose memory max and swap max are cap's. Throws with what failed; a unit that
  // already holds processes is refused.
  virtual void enter_scope(const MemoryCap &cap, const std::string &unit, int requester_pidfd) = 0;
  // Refuses a slice the driver would not put under its parent (systemd's naming).
  virtual void check_slice(const std::string &slice) const { (void)slice; }
  // "cgroup1 (parent /sys/fs/cgroup/memory/slots)": for replies and messages.
  virtual std::string describe() const = 0;
};

struct ChosenDriver {
  std::unique_ptr<CapDriver> driver;
  std::string why;  // "auto: no systemd; parent /x is on a cgroup v1 hierarchy"
};

// The driver the op's [ops.<name>] table chooses (driver, parent, bus), checked: throws
// config.error(key, ...) for a key written wrong and std::runtime_error when none fits.
ChosenDriver make_driver(const OpConfig &config);

}  // namespace sandbox_host::cap
