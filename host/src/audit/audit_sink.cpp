#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/metrics/recorder.hpp>
#include <sandbox_host/host/text_escape.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
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
  {
    std::lock_guard lock(mutex_);
    close_windows(Clock::time_point::max());
  }
  if (owns_fd_) ::close(fd_);
}

void AuditSink::write(const AuditRecord &record) {
  write_all(fd_, format_ == AuditFormat::json ? format_json(record) : format_text(record));
}

void AuditSink::close_windows(Clock::time_point now) {
  for (auto it = windows_.begin(); it != windows_.end();) {
    Window &window = it->second;
    if (now != Clock::time_point::max() && now - window.start < kAuditWindow) {
      ++it;
      continue;
    }
    if (window.unwritten != 0) {
      AuditRecord count = window.first;
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
          std::min(Clock::now() - window.start, Clock::duration(kAuditWindow)));
      count.attempted = std::to_string(window.unwritten) + " more refusals of this rule in the " +
                        std::to_string(seconds.count()) +
                        " s after its first, not written: " + std::to_string(kAuditBurst) +
                        " are written per " + std::to_string(kAuditWindow.count()) + " s";
      count.hint = "the first of them, above, says what was refused";
      write(count);
    }
    it = windows_.erase(it);
  }
}

void AuditSink::flush() {
  std::lock_guard lock(mutex_);
  close_windows(Clock::time_point::max());
}

void AuditSink::record(const AuditRecord &record) {
  // Every refusal is counted, the ones past the written bound too.
  if (record.refusal) metrics::recorder()->refusal(record.component, record.rule);
  std::lock_guard lock(mutex_);
  if (!record.refusal) {
    write(record);
    return;
  }
  const Clock::time_point now = Clock::now();
  if (now - last_sweep_ >= std::chrono::seconds(1)) {
    close_windows(now);
    last_sweep_ = now;
  }
  std::string key = record.component + '\0' + record.rule + '\0' + record.plugin;
  auto it = windows_.find(key);
  if (it != windows_.end() && now - it->second.start >= kAuditWindow) {
    // Over since the last sweep: its count goes before this record.
    close_windows(now);
    it = windows_.end();
  }
  if (it == windows_.end()) {
    // A plugin's name may be a client's text: past this many keys, plugins share one.
    constexpr std::size_t kMaxWindows = 1024;
    if (windows_.size() >= kMaxWindows) {
      key = record.component + '\0' + record.rule + '\0' + '\0';
    }
    it = windows_.try_emplace(key, Window{record, now, 0, 0}).first;
    if (windows_.size() > kMaxWindows) it->second.first.plugin.clear();
  }
  Window &window = it->second;
  if (window.written < kAuditBurst) {
    ++window.written;
    write(record);
  } else {
    ++window.unwritten;
  }
}

std::unique_ptr<AuditSink> make_audit_sink(AuditFormat format, const std::string &path) {
  if (path == "stderr") return std::make_unique<AuditSink>(format);
  return std::make_unique<AuditSink>(format, path);
}

}  // namespace sandbox_host
