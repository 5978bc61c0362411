// What the tests of SandboxPool share: a launch's stdio and its outcome, the processes a pool
// starts (stage 1 and its children, found in /proc), the pool's audit records, and the
// fixture SandboxPoolTest, a Host on the real namespaces backend.
#pragma once

#include "fixtures.hpp"
#include "process.hpp"

#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/module.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/sandboxtest.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace sandbox_host::pool_harness {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using sandboxtest::TempSpec;

// Every wait of these tests ends by then; a launch takes tens of milliseconds.
inline constexpr std::chrono::milliseconds kTimeout = 10s;

// Whether done() became true before timeout, checked every 10 ms.
inline bool eventually(const std::function<bool()> &done,
                       std::chrono::milliseconds timeout = kTimeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

using test::make_pipe;
using test::Pipe;

// How /proc/<pid>/fd names a pipe end, to tell the test's pipes from any other.
inline std::string proc_name(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return "?";
  return "pipe:[" + std::to_string(st.st_ino) + "]";
}

// What a launched plugin did, as its launcher sees it.
struct Outcome {
  ExitStatus status;
  std::string out;
  std::string err;
  bool timed_out = false;
};

inline std::ostream &operator<<(std::ostream &os, const Outcome &o) {
  return os << "exit code " << o.status.code << " signal " << o.status.signal
            << (o.timed_out ? " (timed out)" : "") << "\nstdout:\n"
            << o.out << "stderr:\n"
            << o.err;
}

// A plugin's stdin, stdout and stderr: pipes whose other ends the test holds.
class PluginStdio {
 public:
  Stdio stdio() const { return {in_.read.get(), out_.write.get(), err_.write.get()}; }
  std::string out_name() const { return proc_name(out_.write.get()); }
  std::string err_name() const { return proc_name(err_.write.get()); }
  std::string in_name() const { return proc_name(in_.read.get()); }

  // After the launch: feeds input, reads stdout and stderr until every writer is gone, then
  // waits for the launch's process to exit (all bounded).
  Outcome finish(Child &child, const std::string &input = "") {
    in_.read.reset();
    out_.write.reset();
    err_.write.reset();
    if (!input.empty() && ::write(in_.write.get(), input.data(), input.size()) < 0) {
      ADD_FAILURE() << "write the plugin's stdin: " << std::strerror(errno);
    }
    in_.write.reset();
    Outcome outcome;
    outcome.timed_out = !read_until_eof(outcome.out, outcome.err);
    if (!eventually([&] { return test::process_gone(child.pid()); })) {
      outcome.timed_out = true;
      ::kill(child.pid(), SIGKILL);
    }
    outcome.status = child.wait();
    if (outcome.timed_out) ADD_FAILURE() << "the plugin did not finish in time; " << outcome;
    return outcome;
  }

  // Reads stdout until a whole line came, bounded; nullopt at EOF or timeout.
  std::optional<std::string> read_line() {
    std::string line;
    const auto deadline = Clock::now() + kTimeout;
    while (line.empty() || line.back() != '\n') {
      pollfd ready{out_.read.get(), POLLIN, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || ::poll(&ready, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char c;
      if (::read(out_.read.get(), &c, 1) != 1) return std::nullopt;
      line.push_back(c);
    }
    line.pop_back();
    return line;
  }

 private:
  bool read_until_eof(std::string &out, std::string &err) {
    const auto deadline = Clock::now() + kTimeout;
    bool out_open = true, err_open = true;
    while (out_open || err_open) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd fds[2] = {{out_open ? out_.read.get() : -1, POLLIN, 0},
                       {err_open ? err_.read.get() : -1, POLLIN, 0}};
      if (::poll(fds, 2, static_cast<int>(left.count())) <= 0) continue;
      for (int i = 0; i < 2; ++i) {
        if (fds[i].revents == 0) continue;
        char buffer[4096];
        ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n > 0) {
          (i == 0 ? out : err).append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          (i == 0 ? out_open : err_open) = false;
        }
      }
    }
    return true;
  }

  Pipe in_ = make_pipe();
  Pipe out_ = make_pipe();
  Pipe err_ = make_pipe();
};

inline Outcome launch_and_finish(SandboxPool &pool, const Spec &spec,
                                 const std::string &input = "") {
  PluginStdio io;
  Child child = pool.launch(spec, io.stdio());
  return io.finish(child, input);
}

// Launches spec where the sandbox whose stage 1 is `sandbox` was waiting for it.
inline Outcome launch_in_sandbox(SandboxPool &pool, const Spec &spec, pid_t sandbox) {
  PluginStdio io;
  Child child = pool.launch(spec, io.stdio());
  EXPECT_EQ(child.pid(), sandbox) << "the launch did not run in the sandbox prepared before it";
  return io.finish(child);
}

// ---- the processes a pool starts ---------------------------------------------------------

// The parent of pid, or nullopt when pid is gone or a zombie.
inline std::optional<pid_t> live_parent(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  std::istringstream rest(line.substr(line.rfind(')') + 1));
  char state = 0;
  pid_t parent = 0;
  rest >> state >> parent;
  if (state == 'Z' || !rest) return std::nullopt;
  return parent;
}

inline std::vector<pid_t> live_children(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto &entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (live_parent(pid) == parent) children.push_back(pid);
  }
  return children;
}

// pid and every process below it.
inline std::vector<pid_t> process_tree(pid_t root) {
  std::vector<pid_t> tree{root};
  for (size_t i = 0; i < tree.size(); ++i) {
    for (pid_t child : live_children(tree[i])) tree.push_back(child);
  }
  return tree;
}

inline bool runs_this_binary(pid_t pid) {
  struct stat self {};
  struct stat other {};
  return ::stat("/proc/self/exe", &self) == 0 &&
         ::stat(("/proc/" + std::to_string(pid) + "/exe").c_str(), &other) == 0 &&
         self.st_dev == other.st_dev && self.st_ino == other.st_ino;
}

// The stage-1 processes of this test process still running: with the namespaces backend,
// the prepared sandboxes a pool holds and the sandboxes of plugins still running.
inline std::vector<pid_t> stage1_processes() {
  std::vector<pid_t> found;
  for (pid_t child : live_children(::getpid())) {
    if (runs_this_binary(child)) found.push_back(child);
  }
  return found;
}

inline bool all_gone(const std::vector<pid_t> &pids) {
  return std::all_of(pids.begin(), pids.end(), [](pid_t pid) { return test::process_gone(pid); });
}

// Kills a prepared sandbox's stage 1 from outside the pool, as the OOM killer or an operator
// could, and waits until it and its init are gone.
inline void kill_sandbox(pid_t stage1) {
  const std::vector<pid_t> tree = process_tree(stage1);
  ASSERT_GE(tree.size(), 2u) << "stage 1 " << stage1 << " has no init below it";
  ASSERT_EQ(::kill(stage1, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return all_gone(tree); }))
      << "sandbox " << stage1 << " outlived SIGKILL";
}

inline std::string error_of(const std::function<void()> &action) {
  try {
    action();
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

// The plugin's whole environment, as BaseEnv defines it for spec.
inline std::vector<std::string> base_env_of(const Spec &spec) {
  return {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + spec.tmp_dir,
          "TMPDIR=" + spec.tmp_dir};
}

inline std::string sh() {
  return fs::canonical("/bin/sh").string();
}

// A plugin that runs a shell script.
inline void run_script(Spec &spec, const std::string &script,
                       std::vector<std::string> params = {}) {
  spec.binary_path = sh();
  spec.args = {"-c", script, "sh"};
  spec.args.insert(spec.args.end(), params.begin(), params.end());
}

// What the pools of a test told the audit sink.
inline std::vector<std::map<std::string, std::string>> pool_records_in(
    const test::AuditCapture &audit) {
  std::vector<std::map<std::string, std::string>> found;
  for (auto &record : audit.records()) {
    if (record["rule"] == "pool-prepare") found.push_back(record);
  }
  return found;
}

class SandboxPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const BackendStatus &status : host_.probe_all()) {
      if (status.name == "namespaces" && !status.available) {
        GTEST_SKIP() << "the namespaces backend does not work here: " << status.reason;
      }
    }
  }

  std::vector<std::map<std::string, std::string>> pool_records() const {
    return pool_records_in(audit_);
  }

  test::AuditCapture audit_;
  Host host_{audit_.apply(test::test_config({"namespaces", "off"}, {"namespaces"}))};
};

}  // namespace sandbox_host::pool_harness
