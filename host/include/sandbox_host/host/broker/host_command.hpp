// Runs one command on the host for an operation (abi.h's sh_reply.run): its own session,
// nothing but its stdio open, its output handed on as it comes, and killed together with
// its process group and descendants when its time, its output cap or its requester runs out.
#pragma once

#include <sandbox_host/module.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace sandbox_host::broker {

struct CommandIo {
  std::function<void(std::string_view)> out, err;
  // Asked at every tick and whenever wake_fd (if >= 0) reports wake_events.
  std::function<bool()> requester_gone;
  int wake_fd = -1;
  short wake_events = 0;
  std::chrono::milliseconds tick{100};
  std::size_t max_output = 0;  // stdout and stderr together; 0: no cap
  int cwd_fd = -1;             // when the command runs in its requester's directory
};

struct CommandResult {
  int code = 0;       // exit status, or 128 + the signal that ended it
  std::string error;  // why it was cut short; empty when it ended by itself
};

// Throws std::system_error when the command cannot be started.
CommandResult run_host_command(const HostCommand &command, CommandIo &io);

// Kills process pid, its process group and every descendant found under /proc.
void kill_process_tree(pid_t pid);

}  // namespace sandbox_host::broker
