// Threads for the egress proxy's sessions, kept between sessions. A session is short (one
// forwarded request, the dial of a CONNECT, a TLS interception), and a thread started for
// each cost more than the session: the clone, and on exit the release of its stack, which
// flushes the TLB of every CPU the process ran on.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace sandbox_host::egress {

class SessionPool {
 public:
  // At most `max_threads` threads; a thread with nothing to do for `linger` ends, so a
  // burst does not hold its threads for the proxy's lifetime.
  SessionPool(std::size_t max_threads, std::chrono::milliseconds linger);
  ~SessionPool();  // waits for the running sessions and ends every thread
  SessionPool(const SessionPool &) = delete;
  SessionPool &operator=(const SessionPool &) = delete;

  // Runs `session` on an idle thread, on a new one while there are fewer than max_threads,
  // or else on the first thread to finish its session: the caller caps how many sessions
  // there are, and a thread that just finished one is busy until it is back waiting.
  // False, and `session` not run, when no thread exists and none can be started.
  bool run(std::function<void()> session);

  std::size_t threads() const;  // started and not ended, idle or busy
  std::size_t idle() const;     // waiting for a session

 private:
  struct State;
  // A thread's life after its first session: waits for the next until `linger` passes.
  static void serve(const std::shared_ptr<State> &state);
  std::shared_ptr<State> state_;  // shared with the threads, which may outlive a wait
};

}  // namespace sandbox_host::egress
