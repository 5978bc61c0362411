// Landlock's refusals as the kernel's audit tells them (Linux 6.15+, Landlock ABI 7), read
// into the host's audit sink under the plugin that was refused. The kernel writes, per
// refused request, one event of several records sharing a serial:
//   LANDLOCK_ACCESS  domain=<id> blockers=<rights> <the object: path=... or daddr=...>
//   LANDLOCK_DOMAIN  domain=<id> status=allocated ... pid=<the process that made it>
//                    (only with the domain's first refusal)
//   SYSCALL          ... pid=<the refused process> exit=<-errno> exe=...
//   EOE              (end of the event; absent, like SYSCALL, for a process that has no
//                    audit context: one forked before audit was turned on)
// and LANDLOCK_DOMAIN status=deallocated when the domain's last process is gone. A domain is
// a launch's when the process that made it is a launch's stage 1: that is the pid the host
// spawned, which restricts itself and then executes the plugin.
#pragma once

#include <sandbox_host/host/audit.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::kernel_audit {

// Record types of linux/audit.h; Debian 12's headers predate Landlock's two.
inline constexpr std::uint16_t kSyscallRecord = 1300;
inline constexpr std::uint16_t kEndOfEvent = 1320;
inline constexpr std::uint16_t kLandlockAccess = 1423;
inline constexpr std::uint16_t kLandlockDomain = 1424;

struct LandlockDenial {
  std::string blockers;  // "fs.read_file", "fs.make_reg", "net.connect_tcp", "scope.signal"
  std::string object;    // what was refused, as the record names it: path="..." dev=... ino=...
  pid_t pid = 0;         // the refused process, in the host's pid namespace; 0 when unknown
  std::string exe;       // its executable, when known
  long syscall = -1;     // the system call's number on this architecture, -1 when unknown
  int error = 0;         // the errno it was answered, 0 when unknown
};

// The audit record of a denial: component the backend, rule "landlock: <blockers>".
AuditRecord landlock_record(const LandlockDenial &denial, const std::string &plugin,
                            const std::string &backend);

// One sandbox whose refusals are recorded.
class LandlockLaunch {
 public:
  LandlockLaunch(std::string plugin, std::string backend, std::shared_ptr<AuditSink> audit);
  // A prepared sandbox is named at its launch.
  void name_plugin(const std::string &plugin);
  void record(const LandlockDenial &denial);
  // Records went missing between the kernel and the host: its receive buffer overran.
  void record_lost(std::uint64_t overruns);

 private:
  std::mutex mutex_;
  std::string plugin_;
  const std::string backend_;
  const std::shared_ptr<AuditSink> audit_;
};

// Reads the kernel's records, one at a time in the order they came, and writes the denials
// of the watched launches. Not thread-safe: one reader owns it. What it holds is bounded:
// events waiting for their end, and domains known, whatever a plugin makes the kernel write.
class LandlockDenials {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxHeldEvents = 1024;
  static constexpr std::size_t kMaxDomains = 4096;
  // How long an event waits for its end, or for its domain's launch to be watched, before
  // it is written as it stands (the kernel sends no end for a process without an audit
  // context) or, when no launch's, forgotten.
  static constexpr std::chrono::seconds kEventWait{1};

  // creator's domains are launch's from now until forget(creator), and those read since
  // spawned (the time just before the fork that made creator, within kEventWait): the
  // launch is watched once its stage 1 runs, which may already have been refused. A domain
  // stays the launch's after forget, until the kernel says it is gone, so that what its
  // remaining processes are refused is still recorded while the host runs.
  void watch(pid_t creator, std::shared_ptr<LandlockLaunch> launch, Clock::time_point spawned);
  void forget(pid_t creator);

  void read(std::uint16_t type, std::string_view text, Clock::time_point now);
  // Writes each event held for longer than kEventWait, and forgets what no launch claimed.
  void expire(Clock::time_point now);
  // Writes every held event refused by one of launch's domains.
  void finish(const LandlockLaunch &launch);
  // Every launch that has a domain or a creator here.
  std::vector<std::shared_ptr<LandlockLaunch>> launches() const;
  std::size_t held_events() const noexcept { return events_.size(); }

 private:
  struct Access {
    std::uint64_t domain = 0;
    std::string blockers;
    std::string object;
  };
  struct Event {
    std::uint64_t arrival = 0;  // the oldest goes first when too many are held
    Clock::time_point since;
    std::vector<Access> accesses;
    pid_t pid = 0;
    std::string exe;
    long syscall = -1;
    int error = 0;
  };

  struct Unclaimed {
    pid_t creator = 0;
    Clock::time_point since;
  };

  // Writes the event's refusals, and forgets it; unless final is false and one of its
  // domains may yet be claimed.
  void finish_event(std::map<std::uint64_t, Event>::iterator event, bool final);

  std::map<pid_t, std::shared_ptr<LandlockLaunch>> creators_;
  // Domain ids only grow, so the first is the oldest when there are too many.
  std::map<std::uint64_t, std::shared_ptr<LandlockLaunch>> domains_;
  std::map<std::uint64_t, Unclaimed> unclaimed_;
  std::map<std::uint64_t, Event> events_;  // by serial
  std::uint64_t arrivals_ = 0;
};

}  // namespace sandbox_host::kernel_audit
