// Runs a whole command as a test would from a shell: its output captured, bounded in time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host::test {

struct ProcessResult {
  int code = -1;   // exit code, when it exited
  int signal = 0;  // terminating signal, when killed
  bool timed_out = false;
  std::string out;
  std::string err;
};

struct ProcessOptions {
  // Replaces the environment when set; inherits the test's otherwise.
  std::optional<std::vector<std::string>> env;
  std::chrono::milliseconds timeout{20000};
  // The descriptor to give the command as stdin; /dev/null when unset.
  std::optional<int> stdin_fd;
  // The command's working directory; the test's own when unset.
  std::optional<std::string> cwd;
};

// Options with exactly this environment.
inline ProcessOptions with_env(std::vector<std::string> env) {
  ProcessOptions options;
  options.env = std::move(env);
  return options;
}

ProcessResult run_process(const std::vector<std::string> &argv, const ProcessOptions &options = {});

// A running command whose stdout is read line by line; killed and reaped on destruction.
class RunningProcess {
 public:
  explicit RunningProcess(const std::vector<std::string> &argv, const ProcessOptions &options = {});
  ~RunningProcess();
  RunningProcess(const RunningProcess &) = delete;
  RunningProcess &operator=(const RunningProcess &) = delete;

  pid_t pid() const noexcept { return pid_; }
  // The next stdout line, or nullopt at EOF or after the timeout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Waits for exit, bounded by timeout (then kills it).
  ProcessResult wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_buffer_;
  std::string err_buffer_;
  bool reaped_ = false;
};

// Whether a process is gone (no such pid, or a zombie nobody reaped yet).
bool process_gone(pid_t pid);
// Whether the process is gone within timeout, looking every 5 ms.
bool gone_within(pid_t pid, std::chrono::milliseconds timeout);

}  // namespace sandbox_host::test
