// The spool transport (docs/design.md#broker-protocol): a directory the broker's user writes
// requests into. A client makes a FIFO <id>.reply, writes its request to .<id>.partial,
// locks it, and renames it to <id>.request, holding it open until the answer is in. The
// broker answers as the process holding that request (see docs/broker.md for the rules).
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host::broker {

// The spool under the broker's state directory.
std::filesystem::path spool_dir(const std::filesystem::path &state_dir);

inline constexpr std::string_view kRequestSuffix = ".request";
inline constexpr std::string_view kReplySuffix = ".reply";
inline constexpr std::string_view kPartialSuffix = ".partial";
// The broker holds a write lock on this file for as long as it serves the spool.
inline constexpr const char *kBrokerLockFile = ".broker";
// Where a directory named like a request goes when it cannot be removed (it is not empty).
inline constexpr const char *kQuarantineDir = ".quarantine";

// A request file the broker has taken: opened, described and unlinked, so no second scan
// takes it again.
struct ClaimedRequest {
  std::string id;
  UniqueFd file;
  struct stat status {};
};

// The broker's side of one spool directory.
class Spool {
 public:
  // Creates the directory (mode 0700) if it is missing; refuses one that another user owns
  // or that others may write; takes the broker lock, refusing a spool another broker
  // serves. watch: wake on inotify; without it, only the periodic scan finds requests (the
  // first design's polling, kept for comparison).
  Spool(std::filesystem::path dir, bool watch);

  const std::filesystem::path &dir() const noexcept { return dir_; }
  int dir_fd() const noexcept { return dir_fd_.get(); }
  // Readable when requests may have arrived; -1 without inotify.
  int wake_fd() const noexcept { return inotify_.get(); }

  // The ids of requests that arrived since the last call: from inotify, or every request
  // in the directory when the events overflowed or scan is true.
  std::vector<std::string> arrived(bool scan);

  enum class Claim {
    taken,               // claimed holds the request, and error what is wrong with it, if anything
    gone,                // nothing there any more: another taker was first
    out_of_descriptors,  // left in place, to be claimed once the broker has descriptors again
  };
  // Opens, describes and removes <id>.request, so that it is taken once. A symlink, a file
  // that cannot be opened and a directory are removed too (a directory that is not empty is
  // moved into .quarantine), and reported in error.
  Claim claim(const std::string &id, ClaimedRequest &claimed, std::string &error);

  // Opens and unlinks <id>.reply for writing: the requester's FIFO, or nothing when it
  // is not one of this user's FIFOs with its reader still there.
  UniqueFd claim_reply(const std::string &id, std::string &error);

  // Something found in the spool that is not part of a request, and what became of it.
  struct Stray {
    std::string name;
    std::string what;  // "removed a directory", ...
  };
  // Removes what killed clients left, partial requests and reply FIFOs older than age, and
  // anything else older than age that is no request at all; the latter are returned, for
  // the audit (each once: it is gone afterwards, or, when it could not be removed, never
  // returned again).
  std::vector<Stray> collect_garbage(std::chrono::seconds age);

 private:
  std::vector<std::string> scan_all();
  // Moves the directory name into .quarantine; false when it cannot.
  bool quarantine(const std::string &name, const struct stat &status);

  std::filesystem::path dir_;
  UniqueFd dir_fd_;
  UniqueFd lock_;
  UniqueFd inotify_;
  // Strays that could not be removed, by device and inode: reported once, then left alone.
  std::set<std::pair<dev_t, ino_t>> stuck_;
};

}  // namespace sandbox_host::broker
