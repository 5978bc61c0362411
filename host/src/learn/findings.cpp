#include <sandbox_host/host/learn/findings.hpp>

#include <sys/stat.h>

#include <cerrno>

namespace sandbox_host::learn {
namespace {

// Bounds what one hostile plugin can make the host hold: past these, attempts are counted
// as probes, not kept.
constexpr std::size_t kMaxPaths = 10000;
constexpr std::size_t kMaxEndpoints = 1000;
constexpr std::size_t kMaxNames = 1000;

enum class Existence { present, missing, unknown };

// As the host sees it: the judge is the Spec, so the host's own permissions only matter
// where they hide whether the path exists.
Existence existence(const std::string &path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return Existence::present;
  return errno == EACCES ? Existence::unknown : Existence::missing;
}

void note(std::map<std::string, PathFinding> &into, const FileAttempt &attempt) {
  PathFinding &finding = into[attempt.path];
  if (attempt.use > finding.use) finding.use = attempt.use;
  finding.calls.insert(attempt.call);
  ++finding.count;
}

}  // namespace

void FindingsRecorder::count_call() {
  std::lock_guard lock(mutex_);
  ++findings_.calls;
}

void FindingsRecorder::record(const Attempt &attempt) {
  if (const auto *file = std::get_if<FileAttempt>(&attempt)) {
    if (grants_.grants(file->path, file->use)) return;
    // A write is needed whether or not the file exists yet: it is what the plugin makes.
    const Existence there =
        file->use == FileUse::write ? Existence::present : existence(file->path);
    std::lock_guard lock(mutex_);
    auto &into = file->use == FileUse::write   ? findings_.writes
                 : there == Existence::unknown ? findings_.unknown
                                               : findings_.reads;
    if (there == Existence::missing || (!into.contains(file->path) && into.size() >= kMaxPaths)) {
      ++findings_.probes;
      return;
    }
    note(into, *file);
    return;
  }
  if (const auto *socket = std::get_if<SocketAttempt>(&attempt)) {
    if (grants_.grants(socket->to)) return;
    // A socket path the host does not have either is a probe (glibc tries nscd's on every
    // lookup).
    const bool missing = socket->to.family == Endpoint::Family::unix_path &&
                         existence(socket->to.address) == Existence::missing;
    std::lock_guard lock(mutex_);
    if (missing) {
      ++findings_.probes;
      return;
    }
    if (findings_.endpoints.contains(socket->to) || findings_.endpoints.size() < kMaxEndpoints) {
      ++findings_.endpoints[socket->to];
    }
    return;
  }
  const auto &name = std::get<NameAttempt>(attempt);
  std::lock_guard lock(mutex_);
  if (!findings_.names.contains(name.name) && findings_.names.size() >= kMaxNames) return;
  NameFinding &finding = findings_.names[name.name];
  finding.sources.insert(name.source == NameAttempt::Source::dns ? "dns" : "proxy");
  if (name.port != 0) finding.ports.insert(name.port);
}

Findings FindingsRecorder::snapshot() const {
  std::lock_guard lock(mutex_);
  return findings_;
}

}  // namespace sandbox_host::learn
