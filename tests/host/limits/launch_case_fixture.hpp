// What the [limits] fixtures share: a launch by the real `sandbox-host run` of this build,
// under one backend, as root or as nobody (through the copy nobody can reach), with its
// SocketDir and TmpDir in a directory of the test's own under /var/tmp, on the host's disk
// as a gateway's would be.
#pragma once

#include "backend_case.hpp"
#include "fixtures.hpp"
#include "process.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace sandbox_host::test {

class LaunchCaseTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  // name tells the test's directories apart: /var/tmp/sandbox-host-<name>-XXXXXX.
  explicit LaunchCaseTest(std::string name) : name_(std::move(name)) {}

  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it launches as root and as nobody";
    std::string pattern = "/var/tmp/sandbox-host-" + name_ + "-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    std::filesystem::permissions(dir_, std::filesystem::perms(0755));
    for (const char *sub : {"sock", "tmp"}) {
      std::filesystem::create_directory(dir_ / sub);
      if (!root()) {
        ASSERT_EQ(::chown((dir_ / sub).c_str(), kNobody, kNobody), 0);
      }
    }
  }

  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  bool root() const { return GetParam().user == BackendCase::User::root; }

  // `sandbox-host run` with the config in dir_/config.toml, then command.
  std::vector<std::string> argv(const std::vector<std::string> &command) const {
    std::vector<std::string> out;
    if (!root()) out = as_nobody();
    out.insert(out.end(), {root() ? SANDBOX_HOST_EXE : shared_install().sandbox_host(), "run",
                           "--config", (dir_ / "config.toml").string(), "--socket-dir",
                           (dir_ / "sock").string(), "--tmp-dir", (dir_ / "tmp").string(), "--"});
    out.insert(out.end(), command.begin(), command.end());
    return out;
  }

  ProcessOptions options() const {
    using namespace std::chrono_literals;
    ProcessOptions options = with_env(
        {"PATH=/usr/bin:/bin", std::string("CLAWPATROL_SANDBOX_BACKEND=") + GetParam().backend});
    options.cwd = dir_.string();
    options.timeout = 60s;
    return options;
  }

  std::filesystem::path dir_;

 private:
  std::string name_;
};

}  // namespace sandbox_host::test
