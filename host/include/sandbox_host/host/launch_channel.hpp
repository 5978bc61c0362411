// The socket between a long-running host and a sandbox it prepared before the launch was
// known. The sandbox reports ready once; the host hands it exactly one launch: a
// LaunchMessage and, as SCM_RIGHTS, the plugin's stdin, stdout and stderr.
#pragma once

#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/spec_codec.hpp>

#include <cstddef>

namespace sandbox_host {

// The largest launch message, as the largest CLAWPATROL_SANDBOX_SPEC a cold launch can
// pass (the kernel's MAX_ARG_STRLEN).
inline constexpr std::size_t kMaxLaunchMessage = 128 * 1024;

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

}  // namespace sandbox_host
