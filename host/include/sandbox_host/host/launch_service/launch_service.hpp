// The launch service of `sandbox-host serve` ([launcher] in the config): launches for other
// processes of its own uid, on a unix socket, from sandboxes it prepared (SandboxPool), so
// that a gateway in any language gets a prepared sandbox's start-up. A launch's plugin
// lives as long as its client's connection: when that closes, whatever ended the client,
// the plugin is killed.
#pragma once

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_plan.hpp>
#include <sandbox_host/host/launch_service/launch_peer.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/service/loop_progress.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace sandbox_host {

class LaunchService {
 public:
  // Listens at config.socket (0600, in a directory of this uid's that is 0700, made when
  // missing) and starts preparing sandboxes for every backend that works and prepares, for
  // each network the config enables. Throws naming what is wrong with the socket's place.
  // inherited, when valid, is a socket a service manager listens on at config.socket
  // (InheritedSockets checked its type and path): served instead of a new one, with the same
  // checks of its directory and mode, and left in place at the end.
  LaunchService(Host &host, const LauncherConfig &config, UniqueFd inherited = UniqueFd());
  // Ends every launch still running: its plugin is killed, its client told nothing more.
  ~LaunchService();
  LaunchService(const LaunchService &) = delete;
  LaunchService &operator=(const LaunchService &) = delete;

  // Accepts launches until stop is requested. Each turn of the loop that keeps acceptors
  // waiting is counted in progress, when given (serve's watchdog reads it).
  void serve(std::stop_token stop, LoopProgress *progress = nullptr);

  const std::filesystem::path &socket() const noexcept { return socket_path_; }
  std::size_t launched() const noexcept { return launched_; }
  std::size_t refused() const noexcept { return refused_; }
  // Sandboxes prepared and waiting for a launch, in every pool.
  std::size_t prepared() const;

 private:
  // A thread waiting for a connection, started before it comes; it handles what it accepts.
  void accept_and_handle(std::size_t id);
  UniqueFd accept_connection();  // empty once the service stops
  // An adopted listener's acceptors wait here; false once the service stops.
  bool wait_for_connection() const;
  void wake_acceptors();
  // One connection, from its peer's admission to its plugin's end: each step refuses by
  // name (refuse) what it does not take, and handle stops there.
  void handle(int connection);
  struct PendingSlot;  // one of its peer's connections whose request has not come
  struct RunningSlot;  // one of the launches running_ counts
  struct Received;     // a request as it came, with the stdio it brought
  // The peer, when it may ask at all: identified and not itself in a sandbox.
  std::optional<LaunchPeer> admitted_peer(int connection);
  // Takes one of the peer's kMaxPendingPerPeer places, or refuses.
  bool admit_pending(int connection, const LaunchPeer &peer);
  // The request within the service's bounds, once it came; nullopt when refused, or when the
  // client closed without one. The connection is no longer pending then.
  std::optional<Received> receive_request(int connection, PendingSlot &pending);
  // Checked against the config, planned and launched; refused when it does not start.
  std::optional<Child> start_plugin(int connection, Received &received, LaunchPlan &plan,
                                    const std::string &plugin);
  // Until the plugin exits (its status to the client) or its client goes (the plugin killed).
  void watch_plugin(int connection, Child &child, const std::string &plugin,
                    const std::string &mode);
  // A frame the client sent while its plugin runs: a signal to pass on, or its close (false).
  bool pass_client_frame(int connection, Child &child, const std::string &plugin);
  // Counted as a launch of backend refused ("none" before a backend was chosen).
  void refuse(int connection, const std::string &plugin, const std::string &rule,
              const std::string &reason, std::string_view backend = "none");
  SandboxPool &pool_for(const std::string &mode, Network network);
  void reap_finished();  // needs connections_mutex_

  Host &host_;
  const LauncherConfig config_;
  std::filesystem::path socket_path_;
  bool adopted_;  // the listener is a service manager's (socket activation)
  UniqueFd listener_;
  UniqueFd wake_;                      // adopted_ only: readable once the service stops
  std::atomic<bool> stopping_{false};  // set before the listener is shut down

  mutable std::mutex pools_mutex_;
  std::map<std::pair<std::string, Network>, std::unique_ptr<SandboxPool>> pools_;

  struct Connection {
    std::thread thread;
    int fd = -1;  // owned by the thread, which sets -1 before it closes it; shut down to end it
    bool done = false;
  };
  std::mutex connections_mutex_;
  std::condition_variable connections_changed_;
  std::map<std::size_t, Connection> connections_;  // acceptors, idle or handling a launch
  std::size_t next_connection_ = 0;
  std::size_t idle_acceptors_ = 0;  // waiting in accept
  std::size_t running_ = 0;   // admitted connections: a launch received or run, its refusal too
  std::size_t finished_ = 0;  // done, not yet joined
  std::map<pid_t, std::size_t> pending_by_peer_;  // connections whose request has not come

  std::atomic<std::size_t> launched_{0};
  std::atomic<std::size_t> refused_{0};
};

}  // namespace sandbox_host
