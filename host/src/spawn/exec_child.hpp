// Starting a program with vfork rather than fork: the child borrows the host's memory until
// its execve, so no copy of the host's page tables is made and the host takes no
// copy-on-write fault afterwards. On this project's machines a fork of a host with a few
// MiB touched, and the faults that follow it, cost about 2 ms more than a vfork
// (docs/benchmarks.md, "What a launch costs the host"). The child writes nothing of the
// host's memory but its failure, allocates nothing and calls only system calls.
#pragma once

#include <sys/types.h>

#include <vector>

namespace sandbox_host {

struct ExecPlan {
  const char *program = nullptr;
  char *const *argv = nullptr;
  char *const *envp = nullptr;
  int stdio[3] = {0, 1, 2};  // the descriptors that become 0, 1 and 2
  std::vector<int> keep;     // sorted and unique: 0, 1, 2 and the passed descriptors
  std::vector<int> passed;   // kept at their numbers, inheritable
  pid_t parent = 0;          // the host: the child dies with it (PR_SET_PDEATHSIG)
};

// The child's pid, once it has executed plan.program. Throws std::system_error, "spawn
// <program>: <the step that failed in the child>"; the child is reaped then.
pid_t exec_child(const ExecPlan &plan);

}  // namespace sandbox_host
