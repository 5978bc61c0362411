// How a stage-1 process reports a setup failure, which callers outside this repository parse
// (docs/design.md#exit-statuses-and-the-stage-1-failure-line): exactly one line,
// "clawpatrol-sandbox: <step>: <reason>", on stderr, and exit status 87. stdout is never
// touched: it belongs to the plugin's handshake.
#pragma once

#include <unistd.h>

#include <string>
#include <string_view>

namespace sandbox_host {

inline constexpr std::string_view kStage1ErrorPrefix = "clawpatrol-sandbox: ";
inline constexpr int kStage1ExitCode = 87;

// For processes a backend forks during stage 1, which cannot hand an error back to the
// host's stage1(): writes the line and exits at once, running no destructors.
[[noreturn]] inline void exit_stage1_failure(std::string_view message) noexcept {
  std::string line;
  try {
    line.reserve(kStage1ErrorPrefix.size() + message.size() + 1);
    line.append(kStage1ErrorPrefix).append(message);
    for (char &c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    line.push_back('\n');
  } catch (...) {
    line = "clawpatrol-sandbox: out of memory while reporting a setup failure\n";
  }
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
  ::_exit(kStage1ExitCode);
}

}  // namespace sandbox_host
