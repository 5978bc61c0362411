// Names callers outside this repository rely on, so none may change:
// docs/design.md#environment-variables and #exit-statuses-and-the-stage-1-failure-line.
#pragma once

#include <sandbox_host/stage1_failure.hpp>

#include <string_view>

namespace sandbox_host {

// Forces one backend (tests, CI); a forced backend that fails its probe is an error.
inline constexpr std::string_view kEnvBackend = "CLAWPATROL_SANDBOX_BACKEND";
// Drive the re-exec'd child; stage1() strips them before anything else runs.
inline constexpr std::string_view kEnvStage1 = "CLAWPATROL_SANDBOX_STAGE1";
inline constexpr std::string_view kEnvSpec = "CLAWPATROL_SANDBOX_SPEC";
// Instead of kEnvSpec, for a sandbox prepared before its launch (SandboxPool).
inline constexpr std::string_view kEnvPrepared = "CLAWPATROL_SANDBOX_PREPARED";
// The cgroup.procs files, one per line, that stage 1 joins first (limits/plugin_cgroup.hpp).
inline constexpr std::string_view kEnvCgroup = "CLAWPATROL_SANDBOX_CGROUP";
// Every variable with this prefix is the gateway's and never reaches a plugin.
inline constexpr std::string_view kControlPrefix = "CLAWPATROL_";

// Exit status of sandbox-host itself failing or refusing (bad config, Spec, request, no
// backend), as docker run does, so that it stays apart from the plugin's own statuses.
inline constexpr int kHostFailure = 125;

// The launch service's socket for `sandbox-host run` when --via names none.
inline constexpr std::string_view kEnvLauncher = "SANDBOX_HOST_LAUNCHER";

// Backend names the core treats specially: off is never chosen unless written.
inline constexpr std::string_view kModeOff = "off";

}  // namespace sandbox_host
