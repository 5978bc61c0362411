// Probe: whether sandbox-exec is there and applies a profile, tried for real.
#pragma once

#include <sandbox_host/spec.hpp>

#include <chrono>
#include <string>

namespace sandbox_host::seatbelt {

// Apple's, by absolute path, so that no PATH decides which program confines the plugin.
inline constexpr const char *kSandboxExec = "/usr/bin/sandbox-exec";

#if defined(__APPLE__)
inline constexpr bool kBuiltForMacos = true;
#else
inline constexpr bool kBuiltForMacos = false;
#endif

// What the probe runs. The defaults are the real ones; tests point them at stand-ins.
struct SandboxExecProbe {
  std::string sandbox_exec = kSandboxExec;
  std::string trivial_program = "/usr/bin/true";
  // Seatbelt exists on macOS alone: built for anything else, the probe never reports it
  // available, whatever file sits at sandbox_exec.
  bool macos = kBuiltForMacos;
  std::chrono::milliseconds timeout{2000};
};

// Runs sandbox_exec with an allow-default profile on trivial_program, bounded by timeout,
// and reports why it did not work, or, when it did, what seatbelt leaves uncovered.
ProbeReport probe_sandbox_exec(const SandboxExecProbe &probe);

}  // namespace sandbox_host::seatbelt
