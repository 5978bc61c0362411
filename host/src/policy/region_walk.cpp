#include <sandbox_host/host/policy/reallowed_paths.hpp>
#include <sandbox_host/host/policy/region_walk.hpp>

#include <boost/algorithm/string/join.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace sandbox_host::policy {
namespace {

struct DirCloser {
  void operator()(DIR *dir) const { ::closedir(dir); }
};

class Walker {
 public:
  Walker(const Policy &policy, const std::string &what, const std::string &region,
         const WalkBounds &bounds)
      : reallowed_(policy, region), what_(what + " " + region), region_(region), bounds_(bounds) {}

  RegionWalk run() {
    const auto top = reallowed_.match(region_);
    if (top.covering) return out_;
    if (top.below.empty()) {
      out_.closed.push_back(region_);
      return out_;
    }
    descend(region_, 0, top.below);
    out_.open.push_back("Read and Edit of an entry made in " + what_ +
                        " after `sandbox-host policy install`: the rules name the entries it "
                        "held then, so a new one stays open to a session without hooks until "
                        "the next `policy install`");
    return out_;
  }

 private:
  // dir holds the re-allowed entries toward, and is not re-allowed itself.
  void descend(const std::string &dir, std::size_t depth, const std::vector<std::string> &toward) {
    const std::string beside = " beside " + boost::algorithm::join(toward, ", ");
    if (depth == bounds_.depth) {
      out_.open.push_back("Read and Edit below " + dir + ": the walk of " + what_ + " lists " +
                          std::to_string(bounds_.depth) +
                          " levels of directories at most, so what it holds" + beside +
                          " stays open to a session without hooks");
      return;
    }
    std::vector<std::string> names;
    if (!list(dir, depth == 0, names)) {
      out_.open.push_back("Read and Edit below " + dir + ": it cannot be listed (" +
                          std::strerror(errno) + "), so what it holds" + beside +
                          " stays open to a session without hooks");
      return;
    }
    for (const auto &name : names) {
      if (stopped_) return;
      const std::string path = (dir == "/" ? "" : dir) + "/" + name;
      if (listed_ == bounds_.entries) {
        stopped_ = true;
        out_.open.push_back("Read and Edit of " + path + " and of every entry of " + what_ +
                            " after it in the walk: the walk stops at " +
                            std::to_string(bounds_.entries) +
                            " entries, so they stay open to a session without hooks");
        return;
      }
      ++listed_;
      const auto found = reallowed_.match(path);
      if (found.covering) continue;
      if (found.below.empty()) {
        out_.closed.push_back(path);
        continue;
      }
      struct stat status {};
      if (::lstat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
        descend(path, depth + 1, found.below);
      } else {
        out_.open.push_back("Read and Edit below " + path + ": it lies on the way to " +
                            boost::algorithm::join(found.below, ", ") +
                            " but is no directory the walk descends (a symlink is not "
                            "followed), so what it leads to beside that stays open to a "
                            "session without hooks");
      }
    }
  }

  // dir's entries in name order; false, with errno, when it cannot be listed. Only the region
  // itself may be reached through a symlink: the walk descends none.
  static bool list(const std::string &dir, bool top, std::vector<std::string> &names) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (top ? 0 : O_NOFOLLOW));
    if (fd < 0) return false;
    const std::unique_ptr<DIR, DirCloser> listing(::fdopendir(fd));
    if (!listing) {
      const int error = errno;
      ::close(fd);
      errno = error;
      return false;
    }
    for (;;) {
      errno = 0;
      const dirent *entry = ::readdir(listing.get());
      if (entry == nullptr) break;
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    if (errno != 0) return false;
    std::sort(names.begin(), names.end());
    return true;
  }

  const ReallowedPaths reallowed_;
  const std::string what_;
  const std::string region_;
  const WalkBounds bounds_;
  RegionWalk out_;
  std::size_t listed_ = 0;
  bool stopped_ = false;
};

}  // namespace

RegionWalk walk_region(const Policy &policy, const std::string &what, const std::string &region,
                       const WalkBounds &bounds) {
  if (region.empty()) return {};
  return Walker(policy, what, region, bounds).run();
}

}  // namespace sandbox_host::policy
