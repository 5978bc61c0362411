// The proxy's threads never die of SIGPIPE, whatever the process's disposition is
// (`sandbox-host egress` leaves it at the default, and a gateway that links the core has
// its own): splice(2) has no MSG_NOSIGNAL, and OpenSSL writes with write(2), so a client
// that closes while bytes are on their way to it would otherwise end the whole proxy.
// Blocked in the thread that writes, the signal stays pending there and the call fails
// with EPIPE, which ends that connection alone. Threads inherit the mask, so a pool the
// thread starts has it too.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace sandbox_host::egress {

inline void block_sigpipe_in_this_thread() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

}  // namespace sandbox_host::egress
