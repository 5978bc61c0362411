// One thread, one epoll: each sandbox is first its channel, on which stage 1 sends the
// listener (or word that it has none), then that listener until every process under its
// filter is gone (EPOLLHUP). A refused call is recorded before it is answered, so that its
// record is written by the time the plugin can act on the answer, or exit, and no caller
// has to wait for the supervisor to catch up; the audit's bound keeps a loop to a counter.
// Nothing here waits on a plugin: a notification whose caller died or was interrupted is
// answered ENOENT by the kernel and passed over.
#include <sandbox_host/host/seccomp/seccomp_supervisor.hpp>

#include <sandbox_host/seccomp_channel.hpp>
#include <sandbox_host/seccomp_refusals.hpp>

#include <linux/seccomp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host {
namespace {

// Notifications taken from one listener before the others get their turn.
constexpr int kNotificationsPerTurn = 64;

struct Sandbox {
  std::shared_ptr<SeccompWatch> watch;
  UniqueFd fd;  // the channel until the listener comes, then the listener
  bool listening = false;
};

int seccomp_call(unsigned op, unsigned flags, void *args) {
  return static_cast<int>(::syscall(SYS_seccomp, op, flags, args));
}

// The kernel's sizes of the notification structs, which may be larger than this build's.
struct NotificationSizes {
  std::size_t request = sizeof(seccomp_notif);
  std::size_t response = sizeof(seccomp_notif_resp);
  NotificationSizes() {
    seccomp_notif_sizes sizes{};
    if (seccomp_call(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
      request = std::max<std::size_t>(request, sizes.seccomp_notif);
      response = std::max<std::size_t>(response, sizes.seccomp_notif_resp);
    }
  }
};

std::string errno_name(int error) {
  const char *name = ::strerrorname_np(error);
  return name != nullptr ? name : std::to_string(error);
}

class Supervisor {
 public:
  Supervisor() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (!epoll_) throw std::system_error(errno, std::generic_category(), "seccomp: epoll_create1");
    std::thread([this] { serve(); }).detach();
  }

  void add(UniqueFd channel, std::shared_ptr<SeccompWatch> watch) {
    const int fd = channel.get();
    std::lock_guard lock(mutex_);
    sandboxes_[fd] = Sandbox{std::move(watch), std::move(channel)};
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
      const int error = errno;
      sandboxes_.erase(fd);
      throw std::system_error(error, std::generic_category(), "seccomp: watch a channel");
    }
  }

 private:
  [[noreturn]] void serve() {
    epoll_event events[32];
    for (;;) {
      const int ready = ::epoll_wait(epoll_.get(), events, std::size(events), -1);
      for (int i = 0; i < ready; ++i) turn(events[i].data.fd, events[i].events);
    }
  }

  void turn(int fd, std::uint32_t events) {
    Sandbox *sandbox;
    {
      std::lock_guard lock(mutex_);
      auto found = sandboxes_.find(fd);
      if (found == sandboxes_.end()) return;
      sandbox = &found->second;  // only this thread erases
    }
    const bool keep = sandbox->listening ? answer(*sandbox, events) : take_listener(*sandbox);
    if (!keep) forget(fd);
  }

  void forget(int fd) {
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    std::shared_ptr<SeccompWatch> watch;
    {
      std::lock_guard lock(mutex_);
      auto found = sandboxes_.find(fd);
      if (found == sandboxes_.end()) return;
      watch = std::move(found->second.watch);
      sandboxes_.erase(found);
    }
    watch->finish();
  }

  // The channel's one message: the listener, or "N<errno>" where the kernel refused one.
  bool take_listener(Sandbox &sandbox) {
    char word[16] = {};
    iovec data{word, sizeof word - 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(sandbox.fd.get(), &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    UniqueFd listener;
    for (cmsghdr *c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        listener = UniqueFd(fd);
      }
    }
    if (got > 0 && word[0] == kDeclinedWord) {
      const SeccompOrder &order = sandbox.watch->order();
      order.audit->record(
          {order.backend, sandbox.watch->plugin(), "seccomp-unrecorded",
           std::string("the kernel gave this sandbox no seccomp listener (") +
               errno_name(std::atoi(word + 1)) +
               "): its filter answers refused calls itself, and none is recorded",
           "EBUSY: a filter sandbox-host runs under (a container runtime's) has a listener "
           "already; EINVAL: Linux older than 5.0",
           false});
    }
    // EOF or no listener: stage 1 failed or declined before its filter; nothing to watch.
    if (!listener) return false;
    const int old_fd = sandbox.fd.get();
    const int new_fd = listener.get();
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = new_fd;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, old_fd, nullptr);
    {
      std::lock_guard lock(mutex_);
      Sandbox moved{std::move(sandbox.watch), std::move(listener), true};
      sandboxes_.erase(old_fd);
      sandboxes_[new_fd] = std::move(moved);
    }
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, new_fd, &event) != 0) forget(new_fd);
    return true;
  }

  bool answer(Sandbox &sandbox, std::uint32_t events) {
    for (int taken = 0; taken < kNotificationsPerTurn; ++taken) {
      pollfd pending{sandbox.fd.get(), POLLIN, 0};
      if (::poll(&pending, 1, 0) <= 0 || (pending.revents & POLLIN) == 0) break;
      std::vector<char> request(sizes_.request, 0);
      auto *call = reinterpret_cast<seccomp_notif *>(request.data());
      if (::ioctl(sandbox.fd.get(), SECCOMP_IOCTL_NOTIF_RECV, call) != 0) {
        if (errno == EINTR || errno == ENOENT) continue;  // its caller went away
        return false;
      }
      respond(sandbox, *call);
    }
    // Every process under the filter has gone: no call can come any more.
    return (events & (EPOLLHUP | EPOLLERR)) == 0;
  }

  void respond(const Sandbox &sandbox, const seccomp_notif &call) {
    const SeccompOrder &order = sandbox.watch->order();
    const std::optional<Refusal> refusal = refusal_of(call.data);
    if (!refusal && order.learn) {
      TracedCall traced;
      traced.pid = static_cast<pid_t>(call.pid);
      traced.id = call.id;
      traced.data = call.data;
      traced.listener = sandbox.fd.get();
      order.learn->traced(traced);
      send(sandbox.fd.get(), call.id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
      return;
    }
    // A call the filter sent that no rule names is refused too: the filter and this reading
    // disagree, and a sandbox's wall never opens on a disagreement.
    const int error = refusal ? refusal->error : EPERM;
    const std::string rule =
        refusal ? std::string(refusal->rule) : "system call " + std::to_string(call.data.nr);
    order.audit->record(
        {order.backend, sandbox.watch->plugin(), "seccomp: " + rule,
         "pid " + std::to_string(call.pid) + " called it; answered " + errno_name(error),
         refusal ? std::string(refusal->reason) + "; no config grants it (docs/why-denied.md)"
                 : "a call the filter sent that no rule of the host names: report it"});
    send(sandbox.fd.get(), call.id, -error, 0);
  }

  void send(int listener, std::uint64_t id, int error, std::uint32_t flags) {
    std::vector<char> response(sizes_.response, 0);
    auto *answer = reinterpret_cast<seccomp_notif_resp *>(response.data());
    answer->id = id;
    answer->error = error;
    answer->val = 0;
    answer->flags = flags;
    // ENOENT: the caller died or was interrupted meanwhile; nothing is owed to it.
    while (::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, answer) != 0 && errno == EINTR) {
    }
  }

  UniqueFd epoll_;
  NotificationSizes sizes_;
  std::mutex mutex_;
  std::map<int, Sandbox> sandboxes_;
};

// Never destroyed: its thread serves until the process exits, and no exit-time destructor
// may pull the epoll and the table from under it.
Supervisor &supervisor() {
  static Supervisor *instance = new Supervisor;
  return *instance;
}

}  // namespace

void SeccompWatch::name_plugin(const std::string &plugin) {
  std::lock_guard lock(mutex_);
  order_.plugin = plugin;
}

std::string SeccompWatch::plugin() const {
  std::lock_guard lock(mutex_);
  return order_.plugin;
}

void SeccompWatch::finish() {
  std::lock_guard lock(mutex_);
  // The sandbox's sink and observer are its launch's again alone: this thread never holds
  // the last reference to a sink a host has let go of.
  order_.audit.reset();
  order_.learn.reset();
}

std::shared_ptr<SeccompWatch> supervise_seccomp(UniqueFd channel, SeccompOrder order) {
  auto watch = std::make_shared<SeccompWatch>(std::move(order));
  supervisor().add(std::move(channel), watch);
  return watch;
}

std::string seccomp_channel_variable(int fd, bool learn) {
  return std::string(kEnvSeccompChannel) + "=" + std::to_string(fd) +
         (learn ? std::string(kSeccompLearnSuffix) : "");
}

}  // namespace sandbox_host
