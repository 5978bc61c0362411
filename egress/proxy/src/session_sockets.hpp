// The egress proxy's open sessions: how many there are, and the sockets a stop shuts down
// so that sessions blocked on them return. Both are held by objects, not by numbers kept
// by hand: a socket is in the set only while its Shutdown lives, and its owner declares it
// after the descriptor, so it leaves before the descriptor closes and no number in the set
// is ever one that was closed and handed to another connection.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>

namespace sandbox_host::egress {

class SessionSockets {
 public:
  // One counted session, for as long as it lives.
  class Ticket {
   public:
    Ticket(const Ticket &) = delete;
    Ticket &operator=(const Ticket &) = delete;
    ~Ticket();

   private:
    friend class SessionSockets;
    explicit Ticket(SessionSockets &sessions) : sessions_(&sessions) {}
    SessionSockets *sessions_;
  };

  // One socket in the set, for as long as it lives; after stop(), shut down at once.
  class Shutdown {
   public:
    Shutdown(SessionSockets &sessions, int fd);
    Shutdown(const Shutdown &) = delete;
    Shutdown &operator=(const Shutdown &) = delete;
    ~Shutdown();

   private:
    SessionSockets *sessions_;
    int fd_;
  };

  // A ticket while fewer than max sessions are open, else null.
  std::unique_ptr<Ticket> admit(std::size_t max);
  std::size_t count() const;
  // Shuts down every socket in the set and every one added later, then waits until no
  // ticket is left.
  void stop();

 private:
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  std::size_t sessions_ = 0;
  std::multiset<int> fds_;  // each guard's own entry: one leaving keeps another's
  bool stopping_ = false;
};

}  // namespace sandbox_host::egress
