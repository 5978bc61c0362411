// Sandboxes set up before their launches, for a long-running host. A prepared sandbox has
// re-executed stage 1, loaded its backend, created its namespaces and mounted the part of
// its tree that no Spec changes; a launch then adds only its own paths and starts the
// plugin. A launch that cannot use one (none ready in time, a backend that does not
// prepare, another network) runs as Host::command() + spawn() would, so a pool never
// changes what a plugin gets, only how soon.
//
// A pool serves one backend and one network. Its own thread starts every process of the
// pool, prepared or not, so the parent-death signal of each (spawn.hpp) ties it to the
// pool: destroying the pool kills the sandboxes it holds and every plugin it launched that
// still runs. Any thread may launch.
#pragma once

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace sandbox_host {

struct PoolOptions {
  // Sandboxes kept ready; a launch takes one and the pool starts its replacement.
  std::size_t depth = 1;
  // False: no replacements, for a host that knows it launches `depth` plugins (a one-shot
  // launcher: 1).
  bool replace = true;
  // An older sandbox is replaced, not used: its /etc binds and its view of the host's
  // mounts are as old as it is.
  std::chrono::milliseconds max_idle{std::chrono::seconds(30)};
  // True: the pool replaces a sandbox as soon as it is older than max_idle, so that a launch
  // after a quiet spell finds a fresh one (a service that launches at any time). False: a
  // launch that finds an old one discards it then, and waits for its replacement.
  bool renew_idle = false;
  // How long after a launch the pool starts its replacement, so that the plugin just
  // launched gets the CPU first; at once when a launch or wait_ready() waits for one.
  std::chrono::milliseconds refill_delay{50};
  // How long a launch waits for a sandbox that is still setting up.
  std::chrono::milliseconds ready_timeout{std::chrono::seconds(5)};
  // Sandboxes that fail in a row before the pool stops preparing (and says so once).
  unsigned max_failures = 3;
};

struct PoolStats {
  std::size_t prepared_launches = 0;  // ran in a prepared sandbox
  std::size_t cold_launches = 0;      // ran as command() + spawn()
  std::size_t failed = 0;             // prepared sandboxes that died before their launch
  std::size_t ready = 0;              // prepared sandboxes waiting for a launch now
};

class SandboxPool {
 public:
  // Starts preparing `depth` sandboxes when mode's backend prepares them.
  SandboxPool(const Host &host, std::string mode, Network network, PoolOptions options = {});
  // Kills the sandboxes it holds and the plugins it launched that still run.
  ~SandboxPool();
  SandboxPool(const SandboxPool &) = delete;
  SandboxPool &operator=(const SandboxPool &) = delete;

  // Launches spec with the given stdio and plugin_env (as Host::command() takes it). Throws
  // as Host::command() does for a bad Spec.
  Child launch(const Spec &spec, const Stdio &stdio = {},
               const std::vector<std::string> &plugin_env = {});
  // Waits until the sandboxes the pool holds are ready or timeout passed; returns how many
  // are. One that died meanwhile is replaced, and its failure goes to the audit sink.
  std::size_t wait_ready(std::chrono::milliseconds timeout);

  PoolStats stats() const;
  // False when the backend does not prepare or the pool gave up after max_failures.
  bool preparing() const;

 private:
  struct Prepared {
    Child child;       // stage 1, outside the sandbox
    UniqueFd channel;  // launch_channel.hpp, host end
    UniqueFd errors;   // stage 1's stderr, read end
    std::chrono::steady_clock::time_point started;
    bool ready = false;
  };
  enum class Readiness { ready, pending, dead };

  void run_spawner();
  // Replaces the oldest ready sandbox when it is older than max_idle (renew_idle).
  void renew_oldest(std::unique_lock<std::mutex> &lock);
  Prepared start_one() const;
  Child spawn_cold(const Spec &spec, const Stdio &stdio,
                   const std::vector<std::string> &plugin_env);
  Readiness await_ready(Prepared &sandbox, std::chrono::steady_clock::time_point deadline);
  // Kills a prepared sandbox that failed and says why in the audit sink.
  void discard(Prepared &sandbox, const std::string &why, bool for_a_launch);
  bool has_or_prepares_sandboxes() const;
  std::size_t held() const;  // sandboxes ready, starting or being handed over; needs mutex_
  // The oldest prepared sandbox, waiting until deadline for one being started.
  std::optional<Prepared> take(std::chrono::steady_clock::time_point deadline);
  // One taken by take() is done with; launched: it carries a plugin now.
  void handed_over(bool launched);

  const Host &host_;
  const std::string mode_;
  const Network network_;
  const PoolOptions options_;

  // One consumer at a time takes or inspects prepared sandboxes.
  std::mutex consumer_;
  mutable std::mutex mutex_;  // everything below
  std::condition_variable changed_;
  std::list<Prepared> ready_;     // list: wait_ready() holds references while the spawner adds
  std::size_t starting_ = 0;      // being started by the spawner
  std::size_t handing_over_ = 0;  // taken by a launch that has not handed it its launch yet
  std::size_t waiting_ = 0;       // launches and wait_ready() calls waiting for a sandbox
  std::size_t wanted_ = 0;        // sandboxes to hold: depth, less those launched without replace
  std::chrono::steady_clock::time_point last_launch_;
  std::function<void()> errand_;  // a cold launch the spawner thread runs for a caller
  bool preparing_ = false;
  bool stopping_ = false;
  unsigned failures_in_a_row_ = 0;
  PoolStats stats_;
  std::thread spawner_;
};

}  // namespace sandbox_host
