// Whether a seccomp filter is on this process, as /proc/<pid>/status says ("Seccomp: 2"):
// a backend's probe reads it to tell a container runtime's profile that refused a system
// call from a kernel or a setting that did.
#pragma once

#include <fstream>
#include <string>

namespace sandbox_host::backends {

// proc_root is /proc, or a stand-in a test writes.
inline bool under_seccomp_filter(const std::string &proc_root = "/proc") {
  std::ifstream status(proc_root + "/self/status");
  for (std::string line; std::getline(status, line);) {
    // "Seccomp:\t2": 0 none, 1 strict, 2 filter.
    if (line.starts_with("Seccomp:")) return line.ends_with("2");
  }
  return false;
}

}  // namespace sandbox_host::backends
