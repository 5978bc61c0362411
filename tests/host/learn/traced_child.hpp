// A child process whose chosen system calls stop for the test, as the host's seccomp
// supervisor stops a plugin's under `run --learn`: the child loads a filter of its own that
// answers those calls with SECCOMP_RET_USER_NOTIF, hands the filter's listener over, runs
// its action and exits. The test sees each call as the supervisor would (a TracedCall),
// then lets it run.
#pragma once

#include <sandbox_host/host/seccomp/traced_call.hpp>

#include <functional>
#include <vector>

namespace sandbox_host::test {

// What the test does with one stopped call; false leaves it unanswered (the test killed
// the child, or answered itself).
using OnTracedCall = std::function<bool(const TracedCall &call)>;

struct TracedRun {
  int exit_code = -1;  // the child's, -1 when it was killed
  int calls = 0;       // notifications received
};

// Forks; the child stops on calls (names, as libseccomp knows them), then runs action and
// exits with its result. Returns once the child is gone, bounded by ten seconds (then the
// child is killed).
TracedRun run_traced(const std::vector<const char *> &calls, const std::function<int()> &action,
                     const OnTracedCall &on_call);

}  // namespace sandbox_host::test
