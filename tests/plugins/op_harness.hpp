// Loads a real op module the way the host does and calls its handle() with a reply whose
// runner records the command it is asked to run: what an operator checks of an op is the
// command it builds, not the host's runner, which has tests of its own. Where what the
// command itself receives is the point, the runner also runs it, with the broker's own
// runner (Call::execute).
#pragma once

#include <sandbox_host/abi.h>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/module.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ops_test {

// One ask, as the host hands it over, and how the fake runner answers a run.
struct Call {
  sandbox_host::Request request;
  std::vector<std::string> requester_env;
  // The requester the broker identified: a made-up pid without a pidfd, unless a test
  // hands over a real process (the ops that act on their requester need one).
  int requester_pid = 4242;
  int requester_pidfd = -1;
  bool streaming = false;
  // Run the command for real, its out, err and code the outcome's; otherwise only record
  // it and answer run_status.
  bool execute = false;
  int32_t run_status = SH_OK;
  std::string run_error;
};

struct Outcome {
  int32_t status = SH_OK;
  std::string error;
  std::string out, err;
  std::optional<int32_t> code;
  std::vector<sandbox_host::HostCommand> runs;
};

class Op {
 public:
  Op(std::string_view name, const sandbox_host::ModuleSettings &settings);
  Outcome handle(const Call &call) const;

 private:
  sandbox_host::LoadedModule module_;
};

// The message loading the op with settings fails with, after its "module <file>: init
// failed: " prefix; "" when it loads.
std::string load_error(std::string_view name, const sandbox_host::ModuleSettings &settings);

// A fresh directory, removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::filesystem::path &path() const noexcept { return path_; }
  // Writes file name with content and mode; returns its path.
  std::string file(std::string_view name, std::string_view content, unsigned mode) const;

 private:
  std::filesystem::path path_;
};

// Sets (or, with nullopt, unsets) a variable of this process for the object's lifetime.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string> &value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace ops_test
