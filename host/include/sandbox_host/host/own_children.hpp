// The children a host process waits for itself, and the reaping of every other child it
// gets. A long-running host (serve) reaps whatever becomes its child: a process a plugin
// made its child would otherwise stay a zombie of the host's, counted against the user's
// process bound, until the host restarts.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <set>

namespace sandbox_host {

// Names pid, a child this process spawned and will wait for, for as long as it lives.
// Made as soon as the child exists and destroyed once it is reaped.
class OwnChild {
 public:
  explicit OwnChild(pid_t pid);
  ~OwnChild();
  OwnChild(const OwnChild &) = delete;
  OwnChild &operator=(const OwnChild &) = delete;

 private:
  pid_t pid_;
};

// Reaps this process's children that have exited and that no OwnChild names, each once it
// was found so on two calls: a child spawned a moment ago is named a moment later, never
// a reap apart. Call it at an interval (a second, say).
class StrayReaper {
 public:
  // Returns how many it reaped.
  std::size_t reap();

 private:
  std::set<pid_t> seen_;
};

}  // namespace sandbox_host
