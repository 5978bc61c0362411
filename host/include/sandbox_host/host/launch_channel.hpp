// The socket between a long-running host and a sandbox it prepared before the launch was
// known. The sandbox reports ready once; the host hands it exactly one launch: a
// LaunchMessage and, as SCM_RIGHTS, the plugin's stdin, stdout and stderr. The sandbox may
// then report the plugin's status on it, before its own processes exit.
#pragma once

#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>

#include <cstddef>
#include <optional>

namespace sandbox_host {

// The largest Spec either transport carries: a prepared sandbox's launch message, and a
// cold launch's CLAWPATROL_SANDBOX_SPEC, which with its name and NUL stays within the
// kernel's MAX_ARG_STRLEN (128 KiB) for one string of the environment.
inline constexpr std::size_t kMaxLaunchMessage = 127 * 1024;

// A connected SOCK_SEQPACKET pair, close-on-exec: {host end, sandbox end}.
struct ChannelPair {
  int host = -1;
  int sandbox = -1;
};
ChannelPair make_launch_channel();

// Host side. Throws std::system_error naming what failed; std::length_error for a message
// over kMaxLaunchMessage.
void send_launch(int channel, const LaunchMessage &message, const Stdio &stdio);

// Sandbox side. Tells the host this sandbox is ready.
void report_ready(int channel);
// Blocks for the launch; makes its three descriptors this process's 0, 1 and 2 before it
// decodes the message, so that a malformed one is reported on the launcher's stderr.
// Throws std::runtime_error with the reason.
LaunchMessage receive_launch(int channel);
// Reports the plugin's status (exit code, or 128 + signal); false when the host is gone.
bool report_status(int channel, int status) noexcept;

// Host side again: blocks for the status; nullopt once the sandbox's every end closed without
// one (it died, or its backend does not report). Throws std::runtime_error for a malformed one.
std::optional<int> receive_status(int channel);

}  // namespace sandbox_host
