// The systemd driver: asks the service manager over D-Bus (libsystemd's sd-bus), as
// systemd-run does. cap-slot sets the slice's MemoryMax and MemorySwapMax at runtime
// (SetUnitProperties; a slice with no unit yet becomes a transient one), scope starts a
// transient .scope unit in the slice with the requester's pid, Delegate and the cap, and
// waits for its job: the reply must not come before the requester is in the scope.
#include "drivers.hpp"
#include "pinned_process.hpp"

#include <systemd/sd-bus.h>

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace sandbox_host::cap {
namespace {

constexpr const char *kService = "org.freedesktop.systemd1";
constexpr const char *kPath = "/org/freedesktop/systemd1";
constexpr const char *kManager = "org.freedesktop.systemd1.Manager";
// How long one call, and then the unit's job, may take.
constexpr std::chrono::seconds kBusTimeout{15};

struct BusUnref {
  void operator()(sd_bus *bus) const noexcept { sd_bus_flush_close_unref(bus); }
};
struct MessageUnref {
  void operator()(sd_bus_message *message) const noexcept { sd_bus_message_unref(message); }
};
struct SlotUnref {
  void operator()(sd_bus_slot *slot) const noexcept { sd_bus_slot_unref(slot); }
};
using Bus = std::unique_ptr<sd_bus, BusUnref>;
using Message = std::unique_ptr<sd_bus_message, MessageUnref>;
using Slot = std::unique_ptr<sd_bus_slot, SlotUnref>;

class BusError {
 public:
  BusError() = default;
  ~BusError() { sd_bus_error_free(&error_); }
  BusError(const BusError &) = delete;
  BusError &operator=(const BusError &) = delete;
  sd_bus_error *get() noexcept { return &error_; }
  bool is(const char *name) const { return sd_bus_error_has_name(&error_, name) != 0; }
  std::string text(int r) const {
    if (sd_bus_error_is_set(&error_)) {
      return std::string(error_.message != nullptr ? error_.message : error_.name) + " (" +
             error_.name + ")";
    }
    return std::strerror(-r);
  }

 private:
  sd_bus_error error_ = SD_BUS_ERROR_NULL;
};

void check(int r, const std::string &step) {
  if (r < 0) throw std::runtime_error("systemd: " + step + ": " + std::strerror(-r));
}

std::uint64_t bus_limit(const MemoryLimit &limit) {
  return limit ? *limit : UINT64_MAX;  // systemd's "infinity"
}

// The JobRemoved signals seen on the connection, for the job a call started.
struct JobResults {
  std::vector<std::pair<std::string, std::string>> removed;  // job path, result
};

int on_job_removed(sd_bus_message *message, void *userdata, sd_bus_error *) {
  std::uint32_t id = 0;
  const char *job = nullptr, *unit = nullptr, *result = nullptr;
  if (sd_bus_message_read(message, "uoss", &id, &job, &unit, &result) >= 0) {
    static_cast<JobResults *>(userdata)->removed.emplace_back(job, result);
  }
  return 0;
}

class SystemdDriver final : public CapDriver {
 public:
  SystemdDriver(std::string parent, std::optional<std::string> bus)
      : parent_(std::move(parent)), bus_(std::move(bus)) {}

  void check_slice(const std::string &slice) const override {
    const std::string prefix = parent_.substr(0, parent_.size() - std::strlen(".slice")) + "-";
    if (slice.rfind(prefix, 0) != 0) {
      throw std::invalid_argument("slice \"" + slice + "\" is not under the parent slice " +
                                  parent_ + ": its name must start with \"" + prefix + "\"");
    }
  }

  void cap_slice(const MemoryCap &cap) override {
    check_slice(cap.slice);
    Bus bus = open_bus();
    Message call = method(bus.get(), "SetUnitProperties");
    check(sd_bus_message_append(call.get(), "sb", cap.slice.c_str(), 1), "SetUnitProperties");
    append_properties(call.get(), {}, cap, 0);
    BusError error;
    const int r = sd_bus_call(bus.get(), call.get(), timeout_usec(), error.get(), nullptr);
    if (r >= 0) return;
    // A slice nothing made yet has no unit to set: start it as a transient one.
    if (!error.is("org.freedesktop.systemd1.NoSuchUnit")) {
      throw std::runtime_error("systemd: SetUnitProperties " + cap.slice + ": " + error.text(r));
    }
    start_transient(bus.get(), cap.slice, {}, cap, 0);
  }

  void enter_scope(const MemoryCap &cap, const std::string &unit, int requester_pidfd) override {
    check_slice(cap.slice);
    const PinnedProcess requester(requester_pidfd);
    Bus bus = open_bus();
    start_transient(bus.get(), unit, cap.slice, cap, requester.pid());
    requester.check_still_running();
  }

  std::string describe() const override {
    return "systemd (parent " + parent_ + ", bus " + bus_.value_or("the broker's manager") + ")";
  }

 private:
  static std::uint64_t timeout_usec() {
    return std::chrono::duration_cast<std::chrono::microseconds>(kBusTimeout).count();
  }

  Bus open_bus() const {
    sd_bus *raw = nullptr;
    const std::string which = bus_.value_or(::geteuid() == 0 ? "system" : "user");
    int r = 0;
    if (which == "system") {
      r = sd_bus_open_system(&raw);
    } else if (which == "user") {
      r = sd_bus_open_user(&raw);
    } else {
      r = sd_bus_new(&raw);
      Bus bus(raw);
      check(r, "sd_bus_new");
      check(sd_bus_set_address(raw, which.c_str()), "bus address " + which);
      check(sd_bus_set_bus_client(raw, 1), "bus address " + which);
      check(sd_bus_start(raw), "cannot connect to bus " + which);
      return bus;
    }
    check(r, "cannot connect to the " + which + " bus");
    return Bus(raw);
  }

  static Message method(sd_bus *bus, const char *name) {
    sd_bus_message *raw = nullptr;
    check(sd_bus_message_new_method_call(bus, &raw, kService, kPath, kManager, name), name);
    return Message(raw);
  }

  // a(sv): [Slice, Delegate, PIDs] for a scope, then MemoryMax and MemorySwapMax.
  static void append_properties(sd_bus_message *call, const std::string &slice,
                                const MemoryCap &cap, pid_t pid) {
    check(sd_bus_message_open_container(call, 'a', "(sv)"), "properties");
    if (!slice.empty()) {
      check(sd_bus_message_append(call, "(sv)", "Slice", "s", slice.c_str()), "Slice");
      check(sd_bus_message_append(call, "(sv)", "Delegate", "b", 1), "Delegate");
      check(sd_bus_message_append(call, "(sv)", "PIDs", "au", 1, static_cast<std::uint32_t>(pid)),
            "PIDs");
    }
    check(sd_bus_message_append(call, "(sv)", "MemoryMax", "t", bus_limit(cap.max)), "MemoryMax");
    check(sd_bus_message_append(call, "(sv)", "MemorySwapMax", "t", bus_limit(cap.swap)),
          "MemorySwapMax");
    check(sd_bus_message_close_container(call), "properties");
  }

  // StartTransientUnit, then its job's end: the unit runs (and a scope holds its PIDs) only
  // once the job is done.
  static void start_transient(sd_bus *bus, const std::string &unit, const std::string &slice,
                              const MemoryCap &cap, pid_t pid) {
    JobResults jobs;
    sd_bus_slot *raw_slot = nullptr;
    check(sd_bus_match_signal(bus, &raw_slot, kService, kPath, kManager, "JobRemoved",
                              on_job_removed, &jobs),
          "cannot watch for JobRemoved");
    const Slot slot(raw_slot);
    Message call = method(bus, "StartTransientUnit");
    check(sd_bus_message_append(call.get(), "ss", unit.c_str(), "fail"), "StartTransientUnit");
    append_properties(call.get(), slice, cap, pid);
    check(sd_bus_message_append(call.get(), "a(sa(sv))", 0), "StartTransientUnit");
    BusError error;
    sd_bus_message *raw_reply = nullptr;
    const int r = sd_bus_call(bus, call.get(), timeout_usec(), error.get(), &raw_reply);
    if (r < 0)
      throw std::runtime_error("systemd: StartTransientUnit " + unit + ": " + error.text(r));
    const Message reply(raw_reply);
    const char *job_path = nullptr;
    check(sd_bus_message_read(reply.get(), "o", &job_path), "StartTransientUnit's reply");
    const std::string job = job_path;

    const auto deadline = std::chrono::steady_clock::now() + kBusTimeout;
    for (;;) {
      for (const auto &[removed, result] : jobs.removed) {
        if (removed != job) continue;
        if (result != "done") {
          throw std::runtime_error("systemd: starting " + unit + " ended with \"" + result +
                                   "\", not \"done\"");
        }
        return;
      }
      const int processed = sd_bus_process(bus, nullptr);
      check(processed, "reading the bus");
      if (processed > 0) continue;
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        throw std::runtime_error("systemd: the job starting " + unit + " did not end within " +
                                 std::to_string(kBusTimeout.count()) + " s");
      }
      check(sd_bus_wait(bus, std::chrono::duration_cast<std::chrono::microseconds>(left).count()),
            "waiting on the bus");
    }
  }

  std::string parent_;
  std::optional<std::string> bus_;
};

}  // namespace

std::unique_ptr<CapDriver> make_systemd_driver(std::string parent, std::optional<std::string> bus) {
  return std::make_unique<SystemdDriver>(std::move(parent), std::move(bus));
}

}  // namespace sandbox_host::cap
