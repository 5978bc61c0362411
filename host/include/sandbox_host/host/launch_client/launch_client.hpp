// The caller's side of a launch: the options `run` and sandbox-host-launch share, the
// LaunchRequest they make (paths resolved where the caller stands), and the client of the
// launch service. This part loads no module and reads no config, so that the launch
// client's start-up stays that of a small program.
#pragma once

#include <sandbox_host/host/launch_client/launch_request.hpp>

#include <signal.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

struct LaunchOptions {
  std::optional<std::string> name;
  std::optional<std::string> backend;
  std::optional<std::string> network;
  std::optional<std::string> socket_dir;
  std::optional<std::string> tmp_dir;
  std::vector<std::string> read;
  std::vector<std::string> env;
  std::optional<std::string> handshake;
  std::vector<std::string> command;  // BINARY [ARGS...]
};

// Throws std::runtime_error naming the option that is wrong (a path that does not exist,
// a binary not in PATH, an unknown network, an env entry that may not pass).
LaunchRequest make_launch_request(const LaunchOptions &options);

// What run and its client pass on to the plugin: the signals a terminal, a service manager
// or a go-plugin host sends (the plugin runs in its own session, so it sees only these).
sigset_t forwarded_signals();

// Writes text to fd whole, or as much as fd takes (a closed stderr takes nothing): the
// client's messages, without iostreams.
void write_text(int fd, std::string_view text);

// Launches through the service listening at socket and waits for the plugin: returns its
// exit status as run's (128 + signal when killed), or kHostFailure when the service refused
// the launch or could not be reached (one line on stderr, after program's name, says why).
int launch_via(const std::string &program, const std::string &socket, const LaunchRequest &request);

}  // namespace sandbox_host
