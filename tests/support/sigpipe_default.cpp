// Every test process starts with SIGPIPE as a program that sets nothing has it. Poco's
// Foundation, which the tests link to read JSON with another parser, blocks SIGPIPE in the
// thread that loads it, so every thread a test starts would inherit the block and a write
// that should kill (or be guarded against) would pass unseen: the egress proxy died of
// SIGPIPE in `sandbox-host egress` while its tests passed. This runs after Poco's
// initializer, since a program's own initializers run after its libraries'.
#include <pthread.h>
#include <signal.h>

namespace {

const bool sigpipe_unblocked = [] {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  return pthread_sigmask(SIG_UNBLOCK, &pipe, nullptr) == 0;
}();

}  // namespace
