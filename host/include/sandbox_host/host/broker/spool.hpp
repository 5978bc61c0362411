// The spool transport (seed 000's Serve and Ask): a directory the broker's user writes
// requests into. A client makes a FIFO <id>.reply, writes its request to .<id>.partial,
// locks it, and renames it to <id>.request, holding it open until the answer is in. The
// broker answers as the process holding that request (see docs/broker.md for the rules).
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::broker {

// Seed 000's SpoolDir: the spool under the broker's state directory.
std::filesystem::path spool_dir(const std::filesystem::path &state_dir);

inline constexpr std::string_view kRequestSuffix = ".request";
inline constexpr std::string_view kReplySuffix = ".reply";
inline constexpr std::string_view kPartialSuffix = ".partial";
// The broker holds a write lock on this file for as long as it serves the spool.
inline constexpr const char *kBrokerLockFile = ".broker";

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
  // seed's polling design, kept for comparison).
  Spool(std::filesystem::path dir, bool watch);

  const std::filesystem::path &dir() const noexcept { return dir_; }
  int dir_fd() const noexcept { return dir_fd_.get(); }
  // Readable when requests may have arrived; -1 without inotify.
  int wake_fd() const noexcept { return inotify_.get(); }

  // The ids of requests that arrived since the last call: from inotify, or every request
  // in the directory when the events overflowed or scan is true.
  std::vector<std::string> arrived(bool scan);

  // Opens, describes and unlinks <id>.request; nullopt when another taker was first.
  // A symlink or a file that cannot be opened is unlinked too, and reported in error.
  std::optional<ClaimedRequest> claim(const std::string &id, std::string &error);

  // Opens and unlinks <id>.reply for writing: the requester's FIFO, or nothing when it
  // is not one of this user's FIFOs with its reader still there.
  UniqueFd claim_reply(const std::string &id, std::string &error);

  // Removes what killed clients left: partial requests and reply FIFOs older than age.
  void collect_garbage(std::chrono::seconds age);

 private:
  std::vector<std::string> scan_all();

  std::filesystem::path dir_;
  UniqueFd dir_fd_;
  UniqueFd lock_;
  UniqueFd inotify_;
};

}  // namespace sandbox_host::broker
