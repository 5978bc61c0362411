#include <sandbox_host/egress/proxy/token_command.hpp>
#include <sandbox_host/host/broker/host_command.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <poll.h>
#include <sys/eventfd.h>

#include <stdexcept>
#include <system_error>

#include "token_line.hpp"

extern char **environ;

namespace sandbox_host::egress {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> this_environment() {
  std::vector<std::string> env;
  for (char **entry = environ; *entry != nullptr; ++entry) env.emplace_back(*entry);
  return env;
}

// Runs the command once; what it printed is checked by the caller.
std::string run_token_command(HostCommand command, milliseconds bound, std::stop_token stop,
                              const std::string &subject) {
  const std::string name = "the " + subject + " command " + command.path;
  command.timeout = bound;
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) throw TokenReadError("cannot run " + name + ": eventfd failed");
  std::string out;
  bool too_long = false;
  broker::CommandIo io;
  io.out = [&](std::string_view bytes) {
    if (out.size() + bytes.size() > kMaxTokenOutput) {
      too_long = true;
      ::eventfd_write(wake.get(), 1);
      return;
    }
    out.append(bytes);
  };
  io.err = [](std::string_view) {};
  io.requester_gone = [&] { return too_long || stop.stop_requested(); };
  io.wake_fd = wake.get();
  io.wake_events = POLLIN;
  // Wakes the command's loop at once, which then asks requester_gone.
  std::stop_callback wake_on_stop(stop, [&] { ::eventfd_write(wake.get(), 1); });

  broker::CommandResult result;
  try {
    result = broker::run_host_command(command, io);
  } catch (const std::system_error &error) {
    throw TokenReadError(error.what());
  }
  if (stop.stop_requested()) throw TokenReadError(name + " was stopped");
  if (too_long) {
    throw TokenReadError(name + " printed more than " + std::to_string(kMaxTokenOutput) +
                         " bytes; a " + subject + " is one short line");
  }
  if (!result.error.empty()) {
    if (result.error.starts_with("timed out")) {
      throw TokenReadError(name + " did not finish within its bound of " + describe(bound));
    }
    throw TokenReadError(name + " was cut short: " + result.error);
  }
  if (result.code != 0) {
    throw TokenReadError(name + " exited with code " + std::to_string(result.code));
  }
  return out;
}

}  // namespace

TokenReader command_token_reader(std::vector<std::string> argv, std::string subject) {
  if (argv.empty()) throw std::invalid_argument("the " + subject + " command is empty");
  if (argv.front().empty() || argv.front().front() != '/') {
    throw std::invalid_argument("the " + subject + " command \"" + argv.front() +
                                "\" is not an absolute path");
  }
  HostCommand command;
  command.path = argv.front();
  command.args.assign(argv.begin() + 1, argv.end());
  command.env = this_environment();
  return [command = std::move(command), subject = std::move(subject)](milliseconds bound,
                                                                      std::stop_token stop) {
    const std::string out = run_token_command(command, bound, std::move(stop), subject);
    return one_line(out, "the output of the " + subject + " command " + command.path, subject);
  };
}

}  // namespace sandbox_host::egress
