// The driver an op's [ops.<name>] table chooses (cap_driver.hpp's make_driver), its
// settings checked when the module is created, so a mistake stops the module from loading
// instead of failing every request:
//
//   [ops.scope]
//   driver = "auto"     # auto | systemd | cgroup2 | cgroup1
//   parent = "/sys/fs/cgroup/memory/sandbox"   # systemd: a slice, "sandbox.slice"
//   bus = "unix:path=/run/dbus/test.sock"      # systemd only; "system", "user" or an address
#include "cap_driver.hpp"
#include "drivers.hpp"

#include <sandbox_host/command_op.hpp>

#include <stdexcept>
#include <system_error>

namespace sandbox_host::cap {
namespace fs = std::filesystem;

namespace {

std::string slice_parent(const OpConfig &config, const std::string &parent,
                         const std::string &why) {
  if (parent.starts_with("/")) {
    throw config.error("parent", "the systemd driver (" + why +
                                     ") takes the slice the slots live under, like "
                                     "\"sandbox.slice\", not a path; set driver = \"cgroup2\" "
                                     "or \"cgroup1\" to write cgroup directories");
  }
  try {
    check_unit_name("parent", parent, ".slice");
  } catch (const std::invalid_argument &e) {
    throw config.error("parent", e.what());
  }
  return parent;
}

fs::path cgroup_parent(const OpConfig &config, const std::string &parent, DriverKind kind) {
  const std::string driver(to_string(kind));
  if (config.has("bus")) throw config.error("bus", "is for the systemd driver, not " + driver);
  if (!parent.starts_with("/")) {
    throw config.error(
        "parent",
        "the " + driver + " driver takes an absolute cgroup directory, not " + in_quotes(parent));
  }
  std::error_code ec;
  const fs::path canonical = fs::canonical(parent, ec);
  if (ec || !fs::is_directory(canonical, ec)) {
    throw config.error("parent", in_quotes(parent) + " is no directory");
  }
  const std::string filesystem = cgroup_filesystem(canonical);
  if (filesystem != driver) {
    throw config.error("parent", in_quotes(parent) + " is not on " +
                                     (kind == DriverKind::cgroup2 ? "cgroup v2" : "cgroup v1") +
                                     " but on " +
                                     (filesystem.empty() ? "no cgroup filesystem" : filesystem));
  }
  if (kind == DriverKind::cgroup1 && !fs::exists(canonical / "memory.limit_in_bytes", ec)) {
    throw config.error(
        "parent", in_quotes(parent) + " is on a cgroup v1 hierarchy without the memory controller");
  }
  return canonical;
}

}  // namespace

ChosenDriver make_driver(const OpConfig &config) {
  config.allow_only({"driver", "parent", "bus"});
  DriverSettings settings;
  try {
    settings.forced = driver_named(config.value("driver").value_or("auto"));
  } catch (const std::invalid_argument &e) {
    throw config.error("driver", e.what());
  }
  settings.bus = config.value("bus");
  if (settings.bus && *settings.bus != "system" && *settings.bus != "user" &&
      settings.bus->find(':') == std::string::npos) {
    throw config.error("bus", in_quotes(*settings.bus) +
                                  " is neither \"system\", \"user\" nor a D-Bus address "
                                  "(\"unix:path=...\")");
  }
  const auto parent = config.value("parent");
  if (!parent || parent->empty()) {
    throw config.error("parent",
                       "is required: the slice (systemd) or cgroup directory (cgroup2, cgroup1) "
                       "the slots live under");
  }
  if (parent->starts_with("/")) settings.parent = *parent;

  DriverChoice choice{DriverKind::systemd, ""};
  try {
    choice = choose_driver(settings, HostCgroups::of_this_host());
  } catch (const std::runtime_error &e) {
    throw config.error("driver", std::string("auto: ") + e.what());
  }
  switch (choice.kind) {
    case DriverKind::systemd:
      return {make_systemd_driver(slice_parent(config, *parent, choice.why), settings.bus),
              choice.why};
    case DriverKind::cgroup2:
      return {make_cgroup2_driver(cgroup_parent(config, *parent, choice.kind)), choice.why};
    case DriverKind::cgroup1:
      return {make_cgroup1_driver(cgroup_parent(config, *parent, choice.kind)), choice.why};
  }
  throw std::logic_error("unknown cap driver");
}

}  // namespace sandbox_host::cap
