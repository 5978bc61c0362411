// One sink for every refusal sandbox-host makes or observes, and for what a launch let
// through that an operator must be able to trace (the caller's variables it passed): a config or
// Spec refused, a module refused, later a seccomp rule that fired, a broker request or an egress
// connection refused. Text for people, JSON lines for machines.
#pragma once

#include <cstdio>
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

 private:
  AuditFormat format_;
  int fd_;
  bool owns_fd_;
  std::mutex mutex_;
};

// One line whatever the fields hold: their bytes as escape_text (text_escape.hpp) shows
// them, since a field may carry a hostile client's text (an op name, a host name, a path).
std::string format_text(const AuditRecord &record);
// One JSON object on one line, valid whatever the fields hold: each field as json_quoted.
std::string format_json(const AuditRecord &record);

// The sink a config asks for: audit.path "stderr" or a file, in audit.format.
std::unique_ptr<AuditSink> make_audit_sink(AuditFormat format, const std::string &path);

}  // namespace sandbox_host
