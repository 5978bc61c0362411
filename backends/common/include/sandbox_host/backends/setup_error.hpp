// Setup failures in stage 1 read "<step>: <what>: <reason>", the one line of
// docs/design.md#exit-statuses-and-the-stage-1-failure-line.
#pragma once

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sandbox_host::backends {

class SetupError : public std::runtime_error {
 public:
  SetupError(const std::string &step, const std::string &what)
      : std::runtime_error(step + ": " + what) {}
};

// A failed system call: names the step, what was attempted and errno's text.
[[noreturn]] inline void throw_errno(const std::string &step, const std::string &what,
                                     int error = errno) {
  throw SetupError(step, what + ": " + std::strerror(error));
}

}  // namespace sandbox_host::backends
