// What the escape corpus of the landlock backend shares: the fixture LandlockEscape, an
// EscapeCorpus forced to the landlock backend, with a process of the launching user's on the
// host and a plugin that sleeps, both seen from the host (no namespaces).
#pragma once

#include "coverage_warning.hpp"
#include "escape_harness.hpp"
#include "fixtures.hpp"
#include "landlock_abi.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

namespace sandbox_host::landlock_escape {

using namespace test::escape;

namespace fs = std::filesystem;
using test::ProcessResult;
using namespace std::chrono_literals;

class LandlockEscape : public EscapeCorpus {
 protected:
  const char *backend() const override { return "landlock"; }

  void SetUp() override {
    if (landlock::kernel_abi() < 1) GTEST_SKIP() << "no Landlock on this kernel";
    EscapeCorpus::SetUp();
    // No mount namespace: the plugin reaches its directories through the workspace itself.
    hand_to_user(workspace_.dir());
  }

  static int abi() { return landlock::kernel_abi(); }

  // A process of the launching user's on the host, outside the sandbox, with a secret in
  // its environment: what a plugin must neither signal, trace nor read.
  std::unique_ptr<test::RunningProcess> host_process(const std::string &secret) const {
    std::vector<std::string> command;
    if (!root()) command = test::as_nobody();
    command.push_back("/bin/sleep");
    command.push_back("60");
    auto process = std::make_unique<test::RunningProcess>(
        command, test::with_env({"PATH=/usr/bin:/bin", "HOST_SECRET=" + secret}));
    // setpriv execs sleep in the same process: wait until it has.
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (cmdline_of(process->pid()) != std::vector<std::string>{"/bin/sleep", "60"} &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
    }
    return process;
  }

  // A plugin that sleeps, launched in the background; its pid is the host's (no pid
  // namespace), read from its "ready <pid>" line.
  struct Sleeper {
    std::unique_ptr<test::RunningProcess> launcher;
    pid_t plugin = -1;
  };
  Sleeper sleeper(const std::string &marker) const {
    Sleeper s;
    s.launcher = std::make_unique<test::RunningProcess>(argv(plugin(), {"sleep", "60", marker}),
                                                        test::with_env(host_env()));
    auto ready = s.launcher->read_line(10s);
    if (ready && ready->starts_with("ready ")) s.plugin = std::stoi(ready->substr(6));
    return s;
  }
};

}  // namespace sandbox_host::landlock_escape
