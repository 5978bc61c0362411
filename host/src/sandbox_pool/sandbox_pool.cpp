#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <exception>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace sandbox_host {
namespace {

using Clock = std::chrono::steady_clock;

// What a dead stage 1 wrote: its "clawpatrol-sandbox: ..." line, without the newline.
std::string drain(int fd) {
  std::string text;
  std::array<char, 1024> buffer{};
  while (text.size() < 4096) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer.data(), static_cast<size_t>(n));
  }
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

SandboxPool::SandboxPool(const Host &host, std::string mode, Network network, PoolOptions options)
    : host_(host), mode_(std::move(mode)), network_(network), options_(options) {
  wanted_ = options_.depth;
  preparing_ = wanted_ > 0 && host_.prepares(mode_);
  spawner_ = std::thread([this] { run_spawner(); });
}

SandboxPool::~SandboxPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  // The spawner's exit sends the parent-death signal to everything it started; each Child
  // in ready_ then reaps its stage 1.
  spawner_.join();
}

std::size_t SandboxPool::held() const {
  return ready_.size() + starting_ + handing_over_;
}

void SandboxPool::handed_over(bool launched) {
  {
    std::lock_guard lock(mutex_);
    --handing_over_;
    if (launched) {
      last_launch_ = Clock::now();
      if (!options_.replace) --wanted_;
    }
  }
  changed_.notify_all();
}

PoolStats SandboxPool::stats() const {
  std::lock_guard lock(mutex_);
  PoolStats stats = stats_;
  stats.ready = ready_.size();
  return stats;
}

bool SandboxPool::preparing() const {
  std::lock_guard lock(mutex_);
  return preparing_;
}

bool SandboxPool::has_or_prepares_sandboxes() const {
  std::lock_guard lock(mutex_);
  // One started before the pool gave up preparing still serves a launch.
  return preparing_ || !ready_.empty();
}

void SandboxPool::run_spawner() {
  // Signals sent to the host are for its other threads; spawn() gives each child an empty mask.
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock lock(mutex_);
  for (;;) {
    auto work = [this] { return stopping_ || errand_ || (preparing_ && held() < wanted_); };
    if (options_.renew_idle && !ready_.empty()) {
      const Clock::time_point expiry = ready_.front().started + options_.max_idle;
      if (!changed_.wait_until(lock, expiry, work)) {
        renew_oldest(lock);
        continue;
      }
    } else {
      changed_.wait(lock, work);
    }
    if (stopping_) return;
    // A replacement waits a moment after a launch, so that the plugin just launched starts
    // on a CPU nobody is setting a sandbox up on; not when someone waits for it.
    if (!errand_ && waiting_ == 0 && Clock::now() < last_launch_ + options_.refill_delay) {
      changed_.wait_until(lock, last_launch_ + options_.refill_delay,
                          [this] { return stopping_ || errand_ || waiting_ > 0; });
      continue;
    }
    if (errand_) {
      std::function<void()> errand = std::move(errand_);
      errand_ = nullptr;
      lock.unlock();
      errand();
      lock.lock();
      changed_.notify_all();
      continue;
    }
    ++starting_;
    lock.unlock();
    std::optional<Prepared> started;
    std::string failure;
    try {
      started.emplace(start_one());
    } catch (const std::exception &e) {
      failure = e.what();
    }
    lock.lock();
    --starting_;
    if (started) {
      ready_.push_back(std::move(*started));
    } else {
      preparing_ = false;
      host_.audit().record({mode_, "", "pool-prepare", "start a prepared sandbox: " + failure,
                            "the pool stopped preparing sandboxes; launches run without them"});
    }
    changed_.notify_all();
  }
}

void SandboxPool::renew_oldest(std::unique_lock<std::mutex> &lock) {
  // wait_ready() and launches hold references into ready_ while they hold consumer_; one at
  // work now sees to an old sandbox itself.
  std::unique_lock consumer(consumer_, std::try_to_lock);
  if (!consumer.owns_lock()) {
    changed_.wait_for(lock, std::chrono::milliseconds(100));
    return;
  }
  if (ready_.empty() || Clock::now() < ready_.front().started + options_.max_idle) return;
  Prepared old = std::move(ready_.front());
  ready_.pop_front();
  consumer.unlock();
  lock.unlock();
  {
    Prepared killed = std::move(old);  // its Child kills and reaps it: it only grew old
  }
  lock.lock();
}

SandboxPool::Prepared SandboxPool::start_one() const {
  ChannelPair channel = make_launch_channel();
  UniqueFd host_end(channel.host), sandbox_end(channel.sandbox);
  int errors[2];
  if (::pipe2(errors, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "prepare a sandbox: pipe");
  }
  UniqueFd errors_read(errors[0]), errors_write(errors[1]);
  UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!null) throw std::system_error(errno, std::generic_category(), "open /dev/null");
  Child child = spawn(host_.prepare_command(mode_, network_, sandbox_end.get()),
                      {sandbox_end.get()}, {null.get(), null.get(), errors_write.get()});
  return {std::move(child), std::move(host_end), std::move(errors_read), Clock::now(), false};
}

SandboxPool::Readiness SandboxPool::await_ready(Prepared &sandbox, Clock::time_point deadline) {
  while (!sandbox.ready) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    pollfd channel{sandbox.channel.get(), POLLIN, 0};
    int polled = ::poll(&channel, 1, static_cast<int>(std::max<long>(left.count(), 0)));
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) return Readiness::pending;
    if (polled < 0) return Readiness::dead;
    char byte = 0;
    ssize_t n = ::read(sandbox.channel.get(), &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return Readiness::dead;
    sandbox.ready = true;
  }
  return Readiness::ready;
}

void SandboxPool::discard(Prepared &sandbox, const std::string &why, bool for_a_launch) {
  ::kill(sandbox.child.pid(), SIGKILL);
  const ExitStatus status = sandbox.child.wait();
  const std::string said = drain(sandbox.errors.get());
  bool still_preparing;
  {
    std::lock_guard lock(mutex_);
    ++stats_.failed;
    if (++failures_in_a_row_ >= options_.max_failures) preparing_ = false;
    still_preparing = preparing_;
  }
  changed_.notify_all();
  host_.audit().record(
      {mode_, "", "pool-prepare",
       "prepared sandbox " + why + " (stage 1 exit " + std::to_string(status.shell_status()) +
           (said.empty() ? "" : ": " + said) + ")",
       !still_preparing ? "the pool stopped preparing sandboxes; launches run without them"
       : for_a_launch   ? "the launch ran without it"
                        : "the pool starts another"});
}

std::size_t SandboxPool::wait_ready(std::chrono::milliseconds timeout) {
  std::lock_guard consumer(consumer_);
  const auto deadline = Clock::now() + timeout;
  std::vector<Prepared *> held;
  {
    std::unique_lock lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait_until(lock, deadline, [this] {
      return stopping_ || !preparing_ || (ready_.size() >= wanted_ && starting_ == 0);
    });
    --waiting_;
    for (Prepared &sandbox : ready_) held.push_back(&sandbox);
  }
  std::size_t ready = 0;
  std::vector<Prepared *> dead;
  for (Prepared *sandbox : held) {
    const Readiness readiness = await_ready(*sandbox, deadline);
    if (readiness == Readiness::ready) ++ready;
    if (readiness == Readiness::dead) dead.push_back(sandbox);
  }
  for (Prepared *sandbox : dead) {
    discard(*sandbox, "died while setting up", false);
    std::lock_guard lock(mutex_);
    ready_.remove_if([sandbox](const Prepared &p) { return &p == sandbox; });
  }
  changed_.notify_all();
  return ready;
}

std::optional<SandboxPool::Prepared> SandboxPool::take(Clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  // A waiting launch has the spawner start a sandbox now rather than after refill_delay.
  ++waiting_;
  changed_.notify_all();
  changed_.wait_until(lock, deadline, [this] {
    // The last clause: none is being started and none will be (replace = false).
    return !ready_.empty() || !preparing_ || stopping_ || (starting_ == 0 && held() >= wanted_);
  });
  --waiting_;
  if (ready_.empty() || stopping_) return std::nullopt;
  Prepared sandbox = std::move(ready_.front());
  ready_.pop_front();
  // Held until it has its launch, so that its replacement waits as after a launch.
  ++handing_over_;
  return sandbox;
}

Child SandboxPool::spawn_cold(const Spec &spec, const Stdio &stdio,
                              const std::vector<std::string> &plugin_env) {
  const LaunchCommand command = host_.command(spec, mode_, plugin_env);
  std::optional<Child> child;
  std::exception_ptr error;
  bool done = false;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !errand_ || stopping_; });
  if (stopping_) throw std::logic_error("SandboxPool::launch: the pool is being destroyed");
  errand_ = [&] {
    try {
      child.emplace(spawn(command, {}, stdio));
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard done_lock(mutex_);
    done = true;
  };
  changed_.notify_all();
  changed_.wait(lock, [&] { return done || stopping_; });
  if (!done) throw std::logic_error("SandboxPool::launch: the pool is being destroyed");
  if (error) std::rethrow_exception(error);
  ++stats_.cold_launches;
  return std::move(*child);
}

Child SandboxPool::launch(const Spec &spec, const Stdio &stdio,
                          const std::vector<std::string> &plugin_env) {
  // A launch that will run cold is checked once, by command(), not here as well.
  const auto launched = spec.network == network_ && has_or_prepares_sandboxes()
                            ? host_.prepared_launch_spec(spec, mode_, plugin_env)
                            : std::nullopt;
  if (launched) {
    std::lock_guard consumer(consumer_);
    const auto asked = Clock::now();
    const auto deadline = asked + options_.ready_timeout;
    while (std::optional<Prepared> sandbox = take(deadline)) {
      // Idle is the time it waited before this launch asked: one started since is fresh.
      if (asked - sandbox->started > options_.max_idle) {
        sandbox.reset();  // its Child kills it; nothing failed, it only grew old
        handed_over(false);
        continue;
      }
      const Readiness readiness = await_ready(*sandbox, deadline);
      if (readiness != Readiness::ready) {
        discard(*sandbox,
                readiness == Readiness::dead ? "died while setting up" : "was not ready in time",
                true);
        handed_over(false);
        continue;
      }
      // Named before it is sent: the plugin may be refused a call at once, and its record
      // must carry its name.
      sandbox->child.name_plugin(launch_name(spec));
      try {
        host_.bound_cgroup(sandbox->child.cgroup(), spec);
        send_launch(sandbox->channel.get(), {*launched}, stdio);
      } catch (const std::length_error &) {
        sandbox->child.name_plugin("prepared");
        {
          std::lock_guard lock(mutex_);
          ready_.push_front(std::move(*sandbox));
        }
        handed_over(false);
        throw;
      } catch (const std::exception &e) {
        discard(*sandbox, std::string("did not take its launch: ") + e.what(), true);
        handed_over(false);
        continue;
      }
      {
        std::lock_guard lock(mutex_);
        failures_in_a_row_ = 0;
        ++stats_.prepared_launches;
      }
      handed_over(true);
      sandbox->child.take_status_channel(std::move(sandbox->channel));
      sandbox->child.watch(host_.watch_order(spec));
      sandbox->child.explain_death(host_.death_order(spec, mode_));
      return std::move(sandbox->child);
    }
  }
  return spawn_cold(spec, stdio, plugin_env);
}

}  // namespace sandbox_host
