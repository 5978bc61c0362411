#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>
#include <utility>

namespace sandbox_host {
namespace {

void write_all(int fd, const std::string &line) {
  const char *p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // an audit sink that cannot write must not take the host down
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string format_text(const AuditRecord &r) {
  std::string line =
      std::string("sandbox-host: ") + (r.refusal ? "refused: " : "noted: ") + r.component;
  if (!r.plugin.empty()) line += " plugin=" + r.plugin;
  line += " rule=" + r.rule + ": " + r.attempted;
  if (!r.hint.empty()) line += " (hint: " + r.hint + ")";
  // The words around the fields are printable ASCII: escaping the whole line escapes the
  // fields alone.
  return escape_text(line) + "\n";
}

std::string format_json(const AuditRecord &r) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  // Written by hand: boost::json::serialize copies invalid UTF-8 and the C1 controls as
  // they are.
  std::string line =
      "{\"time_ms\":" +
      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count());
  for (const auto &[name, value] :
       {std::pair<const char *, const std::string &>{"component", r.component},
        {"plugin", r.plugin},
        {"rule", r.rule},
        {"attempted", r.attempted},
        {"hint", r.hint}}) {
    line += std::string(",\"") + name + "\":" + json_quoted(value);
  }
  // Only records that are no refusal say so, so that a refusal's line keeps its form.
  if (!r.refusal) line += ",\"refused\":false";
  return line + "}\n";
}

AuditSink::AuditSink(AuditFormat format) : format_(format), fd_(STDERR_FILENO), owns_fd_(false) {}

AuditSink::AuditSink(AuditFormat format, const std::string &path)
    : format_(format),
      fd_(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)),
      owns_fd_(true) {
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "audit log " + path);
}

AuditSink::~AuditSink() {
  if (owns_fd_) ::close(fd_);
}

void AuditSink::record(const AuditRecord &record) {
  std::string line = format_ == AuditFormat::json ? format_json(record) : format_text(record);
  std::lock_guard lock(mutex_);
  write_all(fd_, line);
}

std::unique_ptr<AuditSink> make_audit_sink(AuditFormat format, const std::string &path) {
  if (path == "stderr") return std::make_unique<AuditSink>(format);
  return std::make_unique<AuditSink>(format, path);
}

}  // namespace sandbox_host
