// What the cap tests share: the cap-slot and scope modules loaded as the host loads them
// and asked for a real requester (a process of the test, pinned by its own pidfd), and
// cgroups of the test's own that are removed afterwards.
#pragma once

#include <op_harness.hpp>
#include <process.hpp>

#include <sandbox_host/host/module.hpp>
#include <sandbox_host/module.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace cap_test {

// A process that only waits, and a pidfd for it: what the broker hands an op as its
// requester.
class Requester {
 public:
  Requester();
  pid_t pid() const noexcept { return pid_; }
  int pidfd() const noexcept { return pidfd_.get(); }
  // Kills it and waits until the kernel has let go of it.
  void end();

 private:
  std::unique_ptr<sandbox_host::test::RunningProcess> process_;
  pid_t pid_;
  sandbox_host::UniqueFd pidfd_;
};

// A cap-slot or scope request.
sandbox_host::Request cap_request(const std::string &op, std::string slice, std::string max,
                                  std::string swap, std::string unit = "");

// What `op` answers `request` from `requester`, a real process pinned the way the broker
// pins one.
ops_test::Outcome ask(const ops_test::Op &op, const sandbox_host::Request &request,
                      const Requester &requester);

// The memory cgroup v1 directory this test process runs in.
std::filesystem::path own_memory_cgroup();
// The cgroup2 mount.
std::filesystem::path unified_mount();
// Process pid's cgroup in the hierarchy whose /proc/<pid>/cgroup line names controllers
// ("memory"; "" for cgroup v2's 0:: line).
std::string cgroup_of(pid_t pid, const std::string &controllers);

// A fresh cgroup under `under`, removed with every cgroup made in it (deepest first)
// when the object goes; what ran in them must have ended by then.
class TestCgroup {
 public:
  explicit TestCgroup(const std::filesystem::path &under);
  ~TestCgroup();
  TestCgroup(const TestCgroup &) = delete;
  TestCgroup &operator=(const TestCgroup &) = delete;
  const std::filesystem::path &path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_file(const std::filesystem::path &file);

}  // namespace cap_test
