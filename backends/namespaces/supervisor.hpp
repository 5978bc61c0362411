// The two waiting processes of a sandbox: stage 1 outside, waiting for the sandbox's init,
// and the init as pid 1 inside, waiting for the plugin. Both pass termination signals on.
//
// The init reports the plugin's exit status to stage 1 over a pipe as soon as the plugin
// has exited, and stays until stage 1 is gone: stage 1 exits at once with that status,
// while the init still holds the sandbox's namespaces, so tearing them down (the mount
// tree, the network namespace) is the kernel's work after the launcher has its answer, as
// with bubblewrap. The init's parent-death signal then ends it, and with it every process
// the plugin left behind.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace sandbox_host::namespaces {

// The signals passed on, plus SIGCHLD. Block them before forking the supervised child, so
// none arrives unhandled between the fork and the wait.
sigset_t supervised_signals();

// The init's side: waits for the plugin, reaping every other child too (pid 1 inherits
// orphans), passing the signals on. Returns the status to report: the plugin's exit code,
// or 128 + its signal.
int supervise(pid_t plugin);

// Writes status to stage 1 and waits for the parent-death signal.
[[noreturn]] void report_and_wait_for_the_end(int status_fd, int status);

// Stage 1's side: waits for the init's report on status_fd, passing the signals on. Returns
// the reported status, or, when the init died without one (a setup failure, a kill), its own.
int await_report(pid_t init, int status_fd);

}  // namespace sandbox_host::namespaces
