// What a launch's writable directories hold on the host's disk, as its watch counts it
// (launch_warden.hpp): the names below them, the bytes of each inode once (a hard link or
// TmpDir inside SocketDir counts once: its allocated blocks, a regular file at least its
// size), the files the plugin still holds open or mapped after removing their last name,
// which no walk of the directories finds, and how many descriptors it keeps in flight.
#pragma once

#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace sandbox_host {

struct ScratchUsage {
  std::uint64_t bytes = 0;  // with unlinked_bytes
  std::uint64_t files = 0;  // names below the roots, directories included
  // In files with no name left that a plugin's process holds open or mapped: the whole file,
  // or, where the host may not open a mapped one (map_files needs CAP_SYS_ADMIN), what is
  // mapped of it.
  std::uint64_t unlinked_bytes = 0;
  // Descriptors waiting in the queues of the unix sockets the launch's processes hold
  // (SCM_RIGHTS): a file kept only that way is on the disk, and no /proc file shows which
  // or how large, nor what a socket in such a queue holds in its own.
  std::uint64_t in_flight = 0;
  // A directory that could not be opened or read, and why: what it holds cannot be counted.
  std::string unreadable;
  bool over = false;  // the count stopped early, past a bound
};

class ScratchCounter {
 public:
  // Opens each root now, so that a root renamed or replaced later is still the one counted;
  // a root that is missing is left out.
  explicit ScratchCounter(const std::vector<std::filesystem::path> &roots);

  // Counts until the usage is over max_bytes or max_files. each_dir sees every directory
  // below the roots (an open descriptor of it and its path for people) as it is counted;
  // processes are the launch's, whose open descriptors are looked through for files with
  // no name left.
  ScratchUsage count(std::uint64_t max_bytes, std::uint64_t max_files,
                     const std::function<void(int dir_fd)> &each_dir,
                     const std::vector<pid_t> &processes) const;

 private:
  struct Root {
    std::filesystem::path path;
    UniqueFd fd;  // O_PATH
    dev_t device;
  };
  std::vector<Root> roots_;
};

}  // namespace sandbox_host
