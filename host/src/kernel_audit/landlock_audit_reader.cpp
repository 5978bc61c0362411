// One thread, one subscription: every record the kernel's audit sends comes here, is passed
// over unless it is Landlock's or belongs to one of its events, and is read by
// LandlockDenials under the lock that launches take to be watched, forgotten or settled.
// Nothing here waits on a plugin: the socket is read without blocking, what is held is
// bounded, and a plugin that makes the kernel write faster than this thread reads costs
// only its own records (and the kernel's: its backlog limit drops what does not fit).
#include <sandbox_host/host/kernel_audit/landlock_audit_reader.hpp>

#include <sandbox_host/host/kernel_audit/audit_netlink.hpp>

#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::kernel_audit {
namespace {

using namespace std::chrono_literals;
using Clock = LandlockDenials::Clock;

// How long a launch's end waits for the kernel to send what it holds, and for this thread.
constexpr auto kBacklogWait = 100ms;
constexpr auto kReaderWait = 200ms;
// The longest record the kernel writes (MAX_AUDIT_MESSAGE_LENGTH) and its header.
constexpr std::size_t kMaxMessage = 8970 + NLMSG_HDRLEN;
// Records read before the thread answers the launches that wait and expires what it
// holds: a host whose audit never pauses must not keep them waiting to their bound.
constexpr int kRecordsPerTurn = 1024;

class Reader {
 public:
  explicit Reader(UniqueFd socket)
      : socket_(std::move(socket)), wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (!wake_) throw std::system_error(errno, std::generic_category(), "kernel audit: eventfd");
    std::thread([this] { serve(); }).detach();
  }

  void watch(pid_t creator, std::shared_ptr<LandlockLaunch> launch, Clock::time_point spawned) {
    std::lock_guard lock(mutex_);
    denials_.watch(creator, std::move(launch), spawned);
  }

  void forget(pid_t creator) {
    std::lock_guard lock(mutex_);
    denials_.forget(creator);
  }

  void settle(pid_t creator, const LandlockLaunch &launch) {
    wait_for_kernel_backlog();
    std::unique_lock lock(mutex_);
    const std::uint64_t ticket = ++asked_;
    const std::uint64_t one = 1;
    if (::write(wake_.get(), &one, sizeof one) == sizeof one) {
      read_all_.wait_for(lock, kReaderWait, [&] { return answered_ >= ticket; });
    }
    denials_.finish(launch);
    denials_.forget(creator);
  }

 private:
  // Until the kernel's audit thread has sent every record queued before now (the plugin's
  // refusals were queued before it ended), or the wait is over.
  static void wait_for_kernel_backlog() {
    const auto deadline = Clock::now() + kBacklogWait;
    for (;;) {
      const auto status = kernel_audit_status();
      if (!status || !status->enabled || status->backlog == 0) return;
      if (Clock::now() > deadline) return;
      std::this_thread::sleep_for(1ms);
    }
  }

  [[noreturn]] void serve() {
    std::vector<char> buffer(kMaxMessage);
    bool holding = false;
    for (;;) {
      pollfd ready[2] = {{socket_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
      // Woken only to expire what it holds: an idle host's thread sleeps.
      ::poll(ready, 2, holding ? 250 : -1);
      std::uint64_t asked;
      {
        std::lock_guard lock(mutex_);
        asked = asked_;
      }
      std::uint64_t wakes;
      while (::read(wake_.get(), &wakes, sizeof wakes) > 0) {
      }
      const bool drained = read_socket(buffer);
      {
        std::lock_guard lock(mutex_);
        // A launch that waits is answered once what came before it asked has been read.
        if (drained) answered_ = asked;
        denials_.expire(Clock::now());
        holding = denials_.held_events() > 0;
      }
      read_all_.notify_all();
    }
  }

  // What the socket holds, up to kRecordsPerTurn; the kernel sends one record per datagram.
  // Whether it read all there was.
  bool read_socket(std::vector<char> &buffer) {
    std::uint64_t overruns = 0;
    bool drained = false;
    for (int records = 0; records < kRecordsPerTurn && !drained; ++records) {
      const ssize_t got = ::recv(socket_.get(), buffer.data(), buffer.size(), MSG_DONTWAIT);
      if (got < 0) {
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {
          ++overruns;
          continue;
        }
        drained = true;
        continue;
      }
      if (static_cast<std::size_t>(got) < NLMSG_HDRLEN) continue;
      nlmsghdr header;
      std::memcpy(&header, buffer.data(), sizeof header);
      std::string_view text(buffer.data() + NLMSG_HDRLEN, got - NLMSG_HDRLEN);
      text = text.substr(0, text.find('\0'));
      std::lock_guard lock(mutex_);
      denials_.read(header.nlmsg_type, text, Clock::now());
    }
    if (overruns > 0) {
      std::vector<std::shared_ptr<LandlockLaunch>> launches;
      {
        std::lock_guard lock(mutex_);
        launches = denials_.launches();
      }
      for (const auto &launch : launches) launch->record_lost(overruns);
    }
    return drained;
  }

  UniqueFd socket_;
  UniqueFd wake_;
  std::mutex mutex_;
  std::condition_variable read_all_;
  std::uint64_t asked_ = 0;
  std::uint64_t answered_ = 0;
  LandlockDenials denials_;
};

std::atomic<Reader *> started_reader{nullptr};

// The host's reader: started by the first launch that finds the audit on and readable, and
// never stopped (launches of every thread reach it until the process exits).
Reader *start_reader() {
  static std::mutex starting;
  static bool refused = false;
  if (Reader *reader = started_reader.load()) return reader;
  std::lock_guard lock(starting);
  if (Reader *reader = started_reader.load()) return reader;
  if (refused || !may_read_kernel_audit()) return nullptr;
  // Off: nothing to read yet. A later launch looks again.
  const auto status = kernel_audit_status();
  if (status && !status->enabled) return nullptr;
  try {
    started_reader = new Reader(subscribe_to_kernel_audit());
  } catch (const std::system_error &) {
    refused = true;
    return nullptr;
  }
  return started_reader.load();
}

}  // namespace

LandlockAuditWatch::LandlockAuditWatch(pid_t creator, std::shared_ptr<LandlockLaunch> launch)
    : creator_(creator), launch_(std::move(launch)) {}

LandlockAuditWatch::~LandlockAuditWatch() {
  if (settled_) return;
  if (Reader *reader = started_reader.load()) reader->forget(creator_);
}

void LandlockAuditWatch::name_plugin(const std::string &plugin) {
  launch_->name_plugin(plugin);
}

void LandlockAuditWatch::settle() {
  if (settled_) return;
  settled_ = true;
  if (Reader *reader = started_reader.load()) reader->settle(creator_, *launch_);
}

bool read_kernel_audit() {
  return start_reader() != nullptr;
}

std::unique_ptr<LandlockAuditWatch> read_landlock_denials(pid_t creator, Clock::time_point spawned,
                                                          std::string plugin, std::string backend,
                                                          std::shared_ptr<AuditSink> audit) {
  Reader *reader = started_reader.load();
  if (reader == nullptr) return nullptr;
  auto launch =
      std::make_shared<LandlockLaunch>(std::move(plugin), std::move(backend), std::move(audit));
  reader->watch(creator, launch, spawned);
  return std::make_unique<LandlockAuditWatch>(creator, std::move(launch));
}

}  // namespace sandbox_host::kernel_audit
