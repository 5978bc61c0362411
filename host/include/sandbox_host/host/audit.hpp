// One sink for every refusal sandbox-host makes or observes, and for what a launch let
// through that an operator must be able to trace (the caller's variables it passed): a config or
// Spec refused, a module refused, later a seccomp rule that fired, a broker request or an egress
// connection refused. Text for people, JSON lines for machines.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace sandbox_host {

struct AuditRecord {
  std::string component;  // "config", "spec", "module", "probe", a backend's name, ...
  std::string plugin;     // empty when no plugin is involved
  std::string rule;       // the rule that refused
  std::string attempted;  // what was attempted
  std::string hint;       // what the operator could do
  // False for what the sink notes that was let through (the variables a launch passed).
  bool refusal = true;
};

enum class AuditFormat { text, json };

// Refusals are written at most kAuditBurst per kAuditWindow for each component, plugin and
// rule: a client that makes the host refuse it in a loop (a sandbox dialing the launch
// service, a request the broker refuses) must not fill the disk or bury other records. The
// ones past the bound are counted, and the count is written as one record of that rule when
// its window is over and the sink writes again, or when the sink closes. What was let
// through is always written.
inline constexpr unsigned kAuditBurst = 100;
inline constexpr std::chrono::seconds kAuditWindow{60};

class AuditSink {
 public:
  // Writes to stderr.
  explicit AuditSink(AuditFormat format = AuditFormat::text);
  // Appends to the file at path, created 0600 if missing.
  AuditSink(AuditFormat format, const std::string &path);
  ~AuditSink();
  AuditSink(const AuditSink &) = delete;
  AuditSink &operator=(const AuditSink &) = delete;

  void record(const AuditRecord &record);
  // Writes the count of every rule's window now, as when the sink closes, and starts them
  // anew.
  void flush();

 private:
  using Clock = std::chrono::steady_clock;
  struct Window {
    AuditRecord first;  // whose component, plugin and rule the count's record names
    Clock::time_point start;
    unsigned written = 0;
    std::uint64_t unwritten = 0;
  };

  void write(const AuditRecord &record);
  // Writes the count of each window over before now (each one, when now is max) and
  // forgets it.
  void close_windows(Clock::time_point now);

  AuditFormat format_;
  int fd_;
  bool owns_fd_;
  std::mutex mutex_;
  std::map<std::string, Window> windows_;
  Clock::time_point last_sweep_{};
};

// One line whatever the fields hold: their bytes as escape_text (text_escape.hpp) shows
// them, since a field may carry a hostile client's text (an op name, a host name, a path).
std::string format_text(const AuditRecord &record);
// One JSON object on one line, valid whatever the fields hold: each field as json_quoted.
std::string format_json(const AuditRecord &record);

// The sink a config asks for: audit.path "stderr" or a file, in audit.format.
std::unique_ptr<AuditSink> make_audit_sink(AuditFormat format, const std::string &path);

}  // namespace sandbox_host
