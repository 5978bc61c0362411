// The broker: answers the requests of sandboxed processes with operation modules, over the
// spool and over per-sandbox sockets (docs/broker.md).
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/broker/op_call.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/service/loop_progress.hpp>
#include <sandbox_host/host/worker_pool.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <string>

namespace sandbox_host {
class Host;
}

namespace sandbox_host::broker {

struct BrokerOptions {
  std::filesystem::path spool;
  std::filesystem::path proc_dir = "/proc";
  std::chrono::milliseconds tick{100};
  std::size_t max_request_bytes = 128 * 1024;
  std::size_t max_reply_bytes = 4 * 1024 * 1024;
  unsigned max_concurrent = 64;
  unsigned max_per_requester = 64;
  unsigned max_queued = 256;
  std::chrono::milliseconds reply_timeout{10000};
  BrokerIdentity identity = BrokerIdentity::lock;
  // Wake on inotify; false leaves only the scan every tick, the first design's polling.
  bool watch = true;

  // The config's [broker] table, with the spool under its state_dir.
  static BrokerOptions from(const BrokerConfig &config);
  // The worker pool's bounds.
  WorkerLimits limits() const;
};

class Broker {
 public:
  // Takes the spool (refusing one another broker serves); throws std::system_error.
  Broker(BrokerOptions options, Operations operations, AuditSink &audit);
  ~Broker();
  Broker(const Broker &) = delete;
  Broker &operator=(const Broker &) = delete;

  // A per-sandbox socket at path, answered from now on, before or while serve() runs;
  // label names the sandbox in the audit. inherited, when valid, is a socket a service
  // manager listens on at path (socket activation), served instead of a new one. Throws
  // std::system_error.
  void listen(const std::filesystem::path &path, const std::string &label = {},
              UniqueFd inherited = UniqueFd());
  // Stops answering at path and removes the socket.
  void unlisten(const std::filesystem::path &path);

  // Answers requests until stop is requested; calls in flight are ended then. Each turn of
  // the loop is counted in progress, when given (serve's watchdog reads it).
  void serve(std::stop_token stop, LoopProgress *progress = nullptr);

  const std::filesystem::path &spool() const noexcept;
  unsigned long answered() const noexcept;
  unsigned long refused() const noexcept;

 private:
  struct State;
  class ServingLoop;  // one serve()'s loop, its state from turn to turn
  std::unique_ptr<State> state_;
};

// The operations host's config enables, loaded (with their [ops.<name>] settings); one that
// does not load is reported by the registry and left out.
Operations load_operations(const Host &host);

}  // namespace sandbox_host::broker
