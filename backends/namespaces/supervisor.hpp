// The two waiting processes of a sandbox: stage 1 outside, waiting for the sandbox's init,
// and the init as pid 1 inside, waiting for the plugin. Both pass termination signals on
// and exit with the status of the process they wait for.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace sandbox_host::namespaces {

// The signals passed on, plus SIGCHLD. Block them before forking the supervised child, so
// none arrives unhandled between the fork and supervise().
sigset_t supervised_signals();

// Waits for child, reaping every other child too (pid 1 inherits orphans), passing the
// signals on. Returns the exit code to exit with: the child's, or 128 + its signal.
int supervise(pid_t child);

}  // namespace sandbox_host::namespaces
