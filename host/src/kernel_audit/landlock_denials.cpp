#include <sandbox_host/host/kernel_audit/landlock_denials.hpp>

#include <sandbox_host/host/kernel_audit/audit_text.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

namespace sandbox_host::kernel_audit {
namespace {

// The fields of an object the kernel took from a process or a file system: shown decoded.
constexpr std::array<std::string_view, 5> kUntrustedKeys = {"path", "name", "dev", "comm", "ocomm"};

// The ACCESS record's fields after blockers=, each untrusted value decoded and quoted.
std::string object_of(std::string_view fields) {
  std::string out;
  bool past_blockers = false;
  for (std::size_t at = 0; at < fields.size();) {
    const std::size_t end = std::min(fields.find(' ', at), fields.size());
    const std::string_view token = fields.substr(at, end - at);
    at = end + 1;
    const std::size_t equals = token.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = token.substr(0, equals);
    if (!past_blockers) {
      past_blockers = key == "blockers";
      continue;
    }
    if (!out.empty()) out += ' ';
    out += key;
    out += '=';
    if (std::find(kUntrustedKeys.begin(), kUntrustedKeys.end(), key) != kUntrustedKeys.end()) {
      out += '"' + untrusted_field(token, key).value_or("") + '"';
    } else {
      out += token.substr(equals + 1);
    }
  }
  return out;
}

std::string errno_name(int error) {
  const char *name = ::strerrorname_np(error);
  return name != nullptr ? name : "errno " + std::to_string(error);
}

std::string hint_for(std::string_view blockers) {
  if (blockers.substr(0, 3) == "fs.") {
    return "a plugin reaches the files its config grants: read = [...] in its [plugins.<name>] "
           "table (sandbox-host run --learn prints the line); it is never granted a write "
           "outside its TmpDir";
  }
  if (blockers.substr(0, 4) == "net.") {
    return "under Landlock a plugin's TCP follows its network setting: none allows no bind "
           "and no connect";
  }
  return "a plugin signals, and reaches abstract unix sockets, only within its own sandbox";
}

}  // namespace

AuditRecord landlock_record(const LandlockDenial &denial, const std::string &plugin,
                            const std::string &backend) {
  std::string attempted = denial.pid > 0 ? "pid " + std::to_string(denial.pid)
                                         : std::string("a process of the sandbox");
  if (!denial.exe.empty()) attempted += " (" + denial.exe + ")";
  if (denial.syscall >= 0) attempted += ", system call " + std::to_string(denial.syscall);
  attempted += ", was refused " + denial.blockers;
  if (!denial.object.empty()) attempted += " on " + denial.object;
  attempted += denial.error > 0 ? "; answered " + errno_name(denial.error) : "";
  return {backend, plugin, "landlock: " + denial.blockers, attempted, hint_for(denial.blockers)};
}

LandlockLaunch::LandlockLaunch(std::string plugin, std::string backend,
                               std::shared_ptr<AuditSink> audit)
    : plugin_(std::move(plugin)), backend_(std::move(backend)), audit_(std::move(audit)) {}

void LandlockLaunch::name_plugin(const std::string &plugin) {
  std::lock_guard lock(mutex_);
  plugin_ = plugin;
}

void LandlockLaunch::record(const LandlockDenial &denial) {
  std::string plugin;
  {
    std::lock_guard lock(mutex_);
    plugin = plugin_;
  }
  audit_->record(landlock_record(denial, plugin, backend_));
}

void LandlockLaunch::record_lost(std::uint64_t overruns) {
  std::string plugin;
  {
    std::lock_guard lock(mutex_);
    plugin = plugin_;
  }
  audit_->record({backend_, plugin, "landlock: records lost",
                  "the kernel's audit sent records faster than the host read them (its "
                  "receive buffer overran " +
                      std::to_string(overruns) +
                      " times); Landlock refusals among them are not recorded",
                  "a plugin refused in a tight loop can cause this; the kernel's own audit "
                  "(auditd) still has what it kept"});
}

void LandlockDenials::watch(pid_t creator, std::shared_ptr<LandlockLaunch> launch,
                            Clock::time_point spawned) {
  for (auto domain = unclaimed_.begin(); domain != unclaimed_.end();) {
    // One read before the fork is an earlier owner's of the pid.
    if (domain->second.creator == creator && domain->second.since >= spawned) {
      domains_[domain->first] = launch;
      domain = unclaimed_.erase(domain);
    } else {
      ++domain;
    }
  }
  creators_[creator] = std::move(launch);
}

void LandlockDenials::forget(pid_t creator) {
  creators_.erase(creator);
}

void LandlockDenials::read(std::uint16_t type, std::string_view text, Clock::time_point now) {
  // Most of what an audited host sends is of other types: passed over unread.
  if (type != kLandlockAccess && type != kLandlockDomain && type != kSyscallRecord &&
      type != kEndOfEvent) {
    return;
  }
  const auto record = split_audit_text(text);
  if (!record) return;
  const std::string_view fields = record->fields;
  switch (type) {
    case kLandlockAccess: {
      const auto domain = hex_field(fields, "domain");
      const auto blockers = field(fields, "blockers");
      if (!domain || !blockers) return;
      auto [event, added] = events_.try_emplace(record->serial);
      if (added) {
        event->second.arrival = arrivals_++;
        event->second.since = now;
      }
      event->second.accesses.push_back({*domain, *blockers, object_of(fields)});
      if (events_.size() > kMaxHeldEvents) {
        finish_event(std::min_element(events_.begin(), events_.end(),
                                      [](const auto &a, const auto &b) {
                                        return a.second.arrival < b.second.arrival;
                                      }),
                     true);
      }
      return;
    }
    case kLandlockDomain: {
      const auto domain = hex_field(fields, "domain");
      if (!domain) return;
      if (field(fields, "status") == "deallocated") {
        domains_.erase(*domain);
        unclaimed_.erase(*domain);
        return;
      }
      const auto creator = number_field(fields, "pid");
      if (!creator) return;
      const auto launch = creators_.find(static_cast<pid_t>(*creator));
      if (launch == creators_.end()) {
        unclaimed_[*domain] = {static_cast<pid_t>(*creator), now};
        if (unclaimed_.size() > kMaxDomains) unclaimed_.erase(unclaimed_.begin());
        return;
      }
      domains_[*domain] = launch->second;
      if (domains_.size() > kMaxDomains) domains_.erase(domains_.begin());
      return;
    }
    case kSyscallRecord: {
      const auto event = events_.find(record->serial);
      if (event == events_.end()) return;
      event->second.pid = static_cast<pid_t>(number_field(fields, "pid").value_or(0));
      event->second.syscall = static_cast<long>(number_field(fields, "syscall").value_or(-1));
      const std::int64_t exit = number_field(fields, "exit").value_or(0);
      event->second.error = exit < 0 && exit > -4096 ? static_cast<int>(-exit) : 0;
      event->second.exe = untrusted_field(fields, "exe").value_or("");
      return;
    }
    case kEndOfEvent: {
      const auto event = events_.find(record->serial);
      if (event != events_.end()) finish_event(event, false);
      return;
    }
    default:
      return;
  }
}

void LandlockDenials::expire(Clock::time_point now) {
  for (auto event = events_.begin(); event != events_.end();) {
    const auto next = std::next(event);
    if (now - event->second.since > kEventWait) finish_event(event, true);
    event = next;
  }
  std::erase_if(unclaimed_,
                [&](const auto &domain) { return now - domain.second.since > kEventWait; });
}

void LandlockDenials::finish(const LandlockLaunch &launch) {
  for (auto event = events_.begin(); event != events_.end();) {
    const auto next = std::next(event);
    const bool ours = std::any_of(
        event->second.accesses.begin(), event->second.accesses.end(), [&](const Access &access) {
          const auto domain = domains_.find(access.domain);
          return domain != domains_.end() && domain->second.get() == &launch;
        });
    if (ours) finish_event(event, true);
    event = next;
  }
}

std::vector<std::shared_ptr<LandlockLaunch>> LandlockDenials::launches() const {
  std::set<std::shared_ptr<LandlockLaunch>> all;
  for (const auto &[creator, launch] : creators_) all.insert(launch);
  for (const auto &[domain, launch] : domains_) all.insert(launch);
  return {all.begin(), all.end()};
}

void LandlockDenials::finish_event(std::map<std::uint64_t, Event>::iterator event, bool final) {
  if (!final &&
      std::any_of(event->second.accesses.begin(), event->second.accesses.end(),
                  [&](const Access &access) { return unclaimed_.count(access.domain); })) {
    return;
  }
  const Event held = std::move(event->second);
  events_.erase(event);
  for (const Access &access : held.accesses) {
    const auto domain = domains_.find(access.domain);
    if (domain == domains_.end()) continue;  // not a launch's: another program's, or the host's
    domain->second->record(
        {access.blockers, access.object, held.pid, held.exe, held.syscall, held.error});
  }
}

}  // namespace sandbox_host::kernel_audit
