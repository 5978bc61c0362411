#include <sandbox_host/host/limits/launch_warden.hpp>

#include <sandbox_host/host/limits/limit_report.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include "process_tree.hpp"
#include "scratch_usage.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

namespace sandbox_host {
namespace {

using Clock = std::chrono::steady_clock;

// After a count, the next for a change inotify reported waits at least kLeastGap and four
// times what the count took; the next without one (for what inotify misses: a host out of
// watches) comes after kRecount, or twenty times what the count took, so that the counts of
// a plugin with many files take a twentieth of a CPU while it is idle.
constexpr auto kLeastGap = std::chrono::milliseconds(5);
constexpr unsigned kChangedCostFactor = 4;
constexpr auto kRecount = std::chrono::milliseconds(250);
constexpr unsigned kIdleCostFactor = 20;

// inotify watches are charged to the launching user's max_user_watches (8,192 on older
// kernels, about 1% of RAM's worth on newer), which every program of that user shares: a
// plugin with 50,000 directories must not cost them. Beyond these bounds a launch's
// directories go unwatched, and the counts on the timer above hold them to their bounds.
constexpr std::size_t kMaxWatchesPerLaunch = 256;
constexpr std::size_t kMaxWatchesPerHost = 4096;

// A descriptor in a unix socket's queue can keep a file with no name on the disk, where no
// count can see it. Passing one from process to process takes microseconds; one that is
// still (or again) in flight at every count for this long is being kept there.
constexpr auto kInFlightGrace = std::chrono::seconds(1);

constexpr std::uint32_t kEvents = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE |
                                  IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |
                                  IN_ONLYDIR;

std::system_error errno_error(const std::string &what) {
  return std::system_error(errno, std::generic_category(), what);
}

}  // namespace

struct LaunchWatch::Watched {
  Watched(WatchOrder order_in, pid_t pid_in, UniqueFd pidfd_in, PluginCgroup *cgroup_in)
      : order(std::move(order_in)),
        pid(pid_in),
        pidfd(std::move(pidfd_in)),
        cgroup(cgroup_in),
        counter(order.dirs),
        deadline(order.limits.lifetime_seconds == WatchLimits::kUnlimited
                     ? Clock::time_point::max()
                     : Clock::now() + std::chrono::seconds(order.limits.lifetime_seconds)) {}

  bool counts() const noexcept {
    return order.limits.scratch_size != WatchLimits::kUnlimited ||
           order.limits.scratch_files != WatchLimits::kUnlimited;
  }

  // Held while the warden acts on the launch; ~LaunchWatch takes it to set ended.
  std::mutex mutex;
  bool ended = false;
  // The record of the warden's stop, for the launch's death report (LaunchWatch::stop_record).
  std::optional<AuditRecord> stop_record;

  const WatchOrder order;
  const pid_t pid;
  const UniqueFd pidfd;
  PluginCgroup *const cgroup;
  const ScratchCounter counter;
  const Clock::time_point deadline;

  // The warden thread's own.
  bool stopped = false;
  bool dirty = true;
  Clock::time_point next_count{};    // after a change
  Clock::time_point next_recount{};  // without one
  // Since when every count has found descriptors in flight; max while the last found none.
  Clock::time_point in_flight_since = Clock::time_point::max();
  std::set<int> watch_descriptors;
};

namespace {

using Watched = LaunchWatch::Watched;

std::string dirs_words(const WatchOrder &order) {
  std::string words;
  for (std::size_t i = 0; i < order.dirs.size(); ++i) {
    words += (i == 0 ? "" : " and ") + std::string(i == 0 ? "SocketDir " : "TmpDir ") +
             order.dirs[i].string();
  }
  return words;
}

// 73498624 -> "70.1M", for a count that no bound needs to match exactly.
std::string rounded_size(std::uint64_t bytes) {
  const char *units[] = {"", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f%s" : "%.1f%s", value, units[unit]);
  return text;
}

std::string raise_hint(const std::string &key, const std::string &plugin) {
  return "raise " + key + " in [limits]" +
         (plugin.empty() ? "" : " or [plugins." + plugin + ".limits]");
}

class Warden {
 public:
  // Never destroyed, so that a Child that a static holds, destroyed after this would be,
  // still ends its watch; the thread ends with the process.
  static Warden &instance() {
    static Warden *const warden = new Warden;
    return *warden;
  }

  void add(std::shared_ptr<Watched> watched) {
    {
      std::lock_guard lock(mutex_);
      watched_.push_back(std::move(watched));
    }
    wake();
  }

  void remove(const Watched *watched) {
    {
      std::lock_guard lock(mutex_);
      std::erase_if(watched_, [&](const auto &w) { return w.get() == watched; });
    }
    wake();
  }

 private:
  Warden()
      : epoll_(::epoll_create1(EPOLL_CLOEXEC)),
        inotify_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
        wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!epoll_ || !wake_) throw errno_error("launch watch: epoll");
    for (int fd : {inotify_.get(), wake_.get()}) {
      // Without inotify (the user's instances used up) the counts still come each second.
      if (fd < 0) continue;
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.fd = fd;
      if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
        throw errno_error("launch watch: epoll_ctl");
      }
    }
    std::thread([this] { run(); }).detach();
  }

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t written = ::write(wake_.get(), &one, sizeof one);
  }

  void run() {
    std::map<const Watched *, std::shared_ptr<Watched>> known;
    for (;;) {
      std::vector<std::shared_ptr<Watched>> current;
      {
        std::lock_guard lock(mutex_);
        current = watched_;
      }
      std::set<const Watched *> still;
      for (const auto &w : current) still.insert(w.get());
      for (auto it = known.begin(); it != known.end();) {
        if (still.count(it->first) != 0) {
          ++it;
        } else {
          forget(*it->second);
          it = known.erase(it);
        }
      }
      for (auto &w : current) known.emplace(w.get(), w);

      Clock::time_point wake_at = Clock::time_point::max();
      for (auto &[key, w] : known) {
        std::lock_guard lock(w->mutex);
        if (w->ended || w->stopped) continue;
        try {
          wake_at = std::min(wake_at, tend(*w));
        } catch (const std::exception &) {
          // Out of memory, or an audit sink that cannot write: this launch is tried again
          // in a moment, and the thread that watches every launch goes on.
          wake_at = std::min(wake_at, Clock::now() + kRecount);
        }
      }
      int timeout = -1;
      if (wake_at != Clock::time_point::max()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake_at - Clock::now());
        timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60'000));
      }
      std::array<epoll_event, 4> events{};
      const int ready = ::epoll_wait(epoll_.get(), events.data(), events.size(), timeout);
      for (int i = 0; i < ready; ++i) {
        if (events[i].data.fd == inotify_.get()) {
          read_changes(known);
        } else {
          std::uint64_t count = 0;
          [[maybe_unused]] const ssize_t got = ::read(wake_.get(), &count, sizeof count);
        }
      }
    }
  }

  // What a launch is due now: its end at its lifetime, or a count. Returns when it is due
  // next.
  Clock::time_point tend(Watched &w) {
    const Clock::time_point now = Clock::now();
    if (now >= w.deadline) {
      stop(w, "lifetime-limit",
           "ran for its lifetime of " + duration_words(w.order.limits.lifetime_seconds) +
               ": the host stopped it",
           raise_hint("lifetime", w.order.plugin) +
               ", or have the gateway start it again when it is needed");
      return Clock::time_point::max();
    }
    if (!w.counts()) return w.deadline;
    if (now >= (w.dirty ? w.next_count : w.next_recount)) {
      count(w);
      if (w.stopped) return Clock::time_point::max();
    }
    return std::min(w.deadline, w.dirty ? w.next_count : w.next_recount);
  }

  void read_changes(std::map<const Watched *, std::shared_ptr<Watched>> &known) {
    alignas(inotify_event) char buffer[16384];
    for (;;) {
      const ssize_t got = ::read(inotify_.get(), buffer, sizeof buffer);
      if (got <= 0) return;
      for (ssize_t at = 0; at < got;) {
        const auto *event = reinterpret_cast<const inotify_event *>(buffer + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        if (event->mask & IN_Q_OVERFLOW) {
          for (auto &[key, w] : known) w->dirty = true;
          continue;
        }
        const auto it = by_descriptor_.find(event->wd);
        if (it == by_descriptor_.end()) continue;
        for (Watched *w : it->second) w->dirty = true;
        if (event->mask & IN_IGNORED) {
          for (Watched *w : it->second) w->watch_descriptors.erase(event->wd);
          by_descriptor_.erase(it);
        }
      }
    }
  }

  void count(Watched &w) {
    const Clock::time_point started = Clock::now();
    const WatchLimits &limits = w.order.limits;
    const ScratchUsage usage = w.counter.count(
        limits.scratch_size, limits.scratch_files, [&](int dir_fd) { watch(w, dir_fd); },
        w.cgroup != nullptr ? w.cgroup->processes() : process_tree(w.pid));
    const Clock::time_point ended = Clock::now();
    const Clock::duration cost = ended - started;
    w.dirty = false;
    w.next_count = ended + std::max<Clock::duration>(kLeastGap, cost * kChangedCostFactor);
    w.next_recount = ended + std::max<Clock::duration>(kRecount, cost * kIdleCostFactor);
    if (usage.in_flight == 0) {
      w.in_flight_since = Clock::time_point::max();
    } else if (w.in_flight_since == Clock::time_point::max()) {
      w.in_flight_since = started;
    }
    if (!usage.unreadable.empty()) {
      stop(w, "scratch-unreadable",
           "left a directory the host cannot read in " + dirs_words(w.order) + " (" +
               usage.unreadable +
               "), so what it holds cannot be counted against scratch_size: the host stopped "
               "the plugin",
           "a plugin keeps what it writes in SocketDir and TmpDir readable by its own user");
    } else if (usage.over) {
      const bool bytes = usage.bytes > limits.scratch_size;
      const std::string bound = bytes ? "scratch_size " + size_words(limits.scratch_size)
                                      : "scratch_files " + std::to_string(limits.scratch_files);
      std::string held = bytes ? rounded_size(usage.bytes) + " (counted so far)"
                               : std::to_string(usage.files) + " names (counted so far)";
      if (bytes && usage.unlinked_bytes != 0) {
        held += ", " + rounded_size(usage.unlinked_bytes) +
                " of it in files with no name left, held open or mapped";
      }
      stop(w, bytes ? "scratch-size-limit" : "scratch-files-limit",
           dirs_words(w.order) + " held more than " + bound + ": " + held +
               "; the host stopped the plugin",
           raise_hint(bytes ? "scratch_size" : "scratch_files", w.order.plugin) +
               ", or have the plugin remove what it no longer needs");
    } else if (ended - w.in_flight_since >= kInFlightGrace) {
      stop(w, "scratch-in-flight",
           "kept " + std::to_string(usage.in_flight) +
               " descriptor(s) in flight in its unix sockets' queues (SCM_RIGHTS) for more than " +
               std::to_string(std::chrono::seconds(kInFlightGrace).count()) +
               " s; a file held only there is on the host's disk where no count sees it, so "
               "what " +
               dirs_words(w.order) +
               " hold cannot be counted against scratch_size: "
               "the host stopped the plugin",
           "a plugin takes the descriptors it is sent at once; one that must keep them queued "
           "needs scratch_size and scratch_files \"unlimited\" in [limits]" +
               (w.order.plugin.empty() ? "" : " or [plugins." + w.order.plugin + ".limits]"));
    }
  }

  void watch(Watched &w, int dir_fd) {
    if (!inotify_) return;
    if (w.watch_descriptors.size() >= kMaxWatchesPerLaunch ||
        by_descriptor_.size() >= kMaxWatchesPerHost) {
      return;
    }
    const std::string path = "/proc/self/fd/" + std::to_string(dir_fd);
    const int wd = ::inotify_add_watch(inotify_.get(), path.c_str(), kEvents);
    if (wd < 0) return;  // no watches left, or no /proc: the counts each second still hold
    by_descriptor_[wd].insert(&w);
    w.watch_descriptors.insert(wd);
  }

  void forget(Watched &w) {
    for (int wd : w.watch_descriptors) {
      const auto it = by_descriptor_.find(wd);
      if (it == by_descriptor_.end()) continue;
      it->second.erase(&w);
      if (it->second.empty()) {
        ::inotify_rm_watch(inotify_.get(), wd);
        by_descriptor_.erase(it);
      }
    }
    w.watch_descriptors.clear();
  }

  // Ends the launch: everything in its cgroup, or without one its process and every process
  // below it.
  void stop(Watched &w, const std::string &rule, const std::string &attempted,
            const std::string &hint) {
    std::string left;
    if (w.cgroup != nullptr) {
      try {
        w.cgroup->kill_all();
      } catch (const std::exception &e) {
        left = std::string("; ") + e.what();
      }
    }
    if (w.cgroup == nullptr) kill_process_tree(w.pidfd.get(), w.pid);
    ::syscall(SYS_pidfd_send_signal, w.pidfd.get(), SIGKILL, nullptr, 0);
    w.stopped = true;
    forget(w);
    w.stop_record = AuditRecord{"limits", w.order.plugin, rule, attempted + left, hint, true};
    w.order.audit->record(*w.stop_record);
  }

  std::mutex mutex_;
  std::vector<std::shared_ptr<Watched>> watched_;
  // The warden thread's own.
  std::map<int, std::set<Watched *>> by_descriptor_;
  UniqueFd epoll_, inotify_, wake_;
};

}  // namespace

bool WatchOrder::bounds_anything() const noexcept {
  return limits.scratch_size != WatchLimits::kUnlimited ||
         limits.scratch_files != WatchLimits::kUnlimited ||
         limits.lifetime_seconds != WatchLimits::kUnlimited;
}

void start_launch_watches() {
  Warden::instance();
}

LaunchWatch::LaunchWatch(std::shared_ptr<Watched> watched) : watched_(std::move(watched)) {
  Warden::instance().add(watched_);
}

LaunchWatch::~LaunchWatch() {
  Warden::instance().remove(watched_.get());
  std::lock_guard lock(watched_->mutex);  // waits for what the warden is doing to it
  watched_->ended = true;
}

std::optional<AuditRecord> LaunchWatch::stop_record() const {
  std::lock_guard lock(watched_->mutex);  // a stop under way is written by the time it is free
  return watched_->stop_record;
}

std::unique_ptr<LaunchWatch> watch_launch(WatchOrder order, pid_t pid, PluginCgroup *cgroup) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) throw errno_error("launch watch: pidfd_open " + std::to_string(pid));
  return std::make_unique<LaunchWatch>(
      std::make_shared<Watched>(std::move(order), pid, std::move(pidfd), cgroup));
}

}  // namespace sandbox_host
