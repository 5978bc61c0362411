// A plugin that turns a directory it was granted into a symlink, for the next launch that is
// given the same directory (the layout the README and the Go package suggest: TmpDir =
// SocketDir/tmp, kept across launches). The next launch is refused with a clear error and
// never grants what the symlink leads to, on both backends, as root and as nobody, whether
// the caller or, past the caller's check, stage 1 meets the symlink.
#include <gtest/gtest.h>

#include "fixtures.hpp"
#include "process.hpp"
#include "serve_fixture.hpp"

#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/stage1_failure.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {
namespace fs = std::filesystem;
using test::ProcessResult;
using test::User;

struct Attack {
  User user;
  std::string backend;
};

class SwappedDirectory : public ::testing::TestWithParam<Attack> {
 protected:
  void SetUp() override {
    if (GetParam().user == User::nobody) {
      ASSERT_EQ(::chown(work_.dir().c_str(), test::kNobody, test::kNobody), 0);
    }
    plugin_ = install_.add_binary(HOSTILE_PLUGIN);
    socket_dir_ = work_.dir() / "sock";
    tmp_dir_ = socket_dir_ / "tmp";
    secret_dir_ = work_.dir() / "secret";
    for (const fs::path &dir : {socket_dir_, tmp_dir_, secret_dir_}) make_users_directory(dir);
    std::ofstream(secret_dir_ / "key") << "the user's secret";
    if (GetParam().user == User::nobody) {
      ASSERT_EQ(::chown((secret_dir_ / "key").c_str(), test::kNobody, test::kNobody), 0);
    }
    if (run({"--", "/bin/true"}).code != 0) {
      GTEST_SKIP() << "backend " << GetParam().backend << " does not work here";
    }
  }

  void make_users_directory(const fs::path &dir) {
    fs::create_directory(dir);
    if (GetParam().user == User::nobody) {
      ASSERT_EQ(::chown(dir.c_str(), test::kNobody, test::kNobody), 0);
    }
  }

  std::vector<std::string> as_user() const {
    return GetParam().user == User::nobody ? test::as_nobody() : std::vector<std::string>{};
  }

  // sandbox-host run with the kept directories, as the user.
  ProcessResult run(const std::vector<std::string> &args) const {
    std::vector<std::string> argv = as_user();
    argv.insert(argv.end(), {install_.sandbox_host(), "run", "--backend", GetParam().backend,
                             "--socket-dir", socket_dir_.string(), "--tmp-dir", tmp_dir_.string()});
    argv.insert(argv.end(), args.begin(), args.end());
    return test::run_process(argv);
  }

  // Launch 1: the plugin swaps its TmpDir for a symlink to the secret's directory. A
  // namespaces plugin cannot (its TmpDir is a mount point), so another process of the user
  // does it, as a Landlock plugin of the same user could.
  void swap_tmp_dir() {
    const ProcessResult swap =
        run({"--", plugin_, "swap", tmp_dir_.string(), secret_dir_.string()});
    ASSERT_EQ(swap.code, 0) << swap.err;
    if (GetParam().backend == "namespaces") {
      ASSERT_EQ(swap.out, "swap: Device or resource busy\n") << swap.err;
      fs::rename(tmp_dir_, tmp_dir_.string() + ".old");
      fs::create_directory_symlink(secret_dir_, tmp_dir_);
    } else {
      ASSERT_EQ(swap.out, "swap: done\n") << swap.err;
    }
    ASSERT_TRUE(fs::is_symlink(tmp_dir_));
  }

  test::UnprivilegedInstall install_;
  test::TempFile work_{"", "unused"};
  std::string plugin_;
  fs::path socket_dir_, tmp_dir_, secret_dir_;
};

TEST_P(SwappedDirectory, TheNextLaunchIsRefusedAndGrantsNothingBehindIt) {
  swap_tmp_dir();
  const ProcessResult next = run({"--", plugin_, "read", (tmp_dir_ / "key").string()});
  EXPECT_EQ(next.code, 125) << next.out << next.err;
  EXPECT_NE(next.err.find("--tmp-dir " + tmp_dir_.string() + ": " + tmp_dir_.string() +
                          " is a symbolic link"),
            std::string::npos)
      << next.err;
  EXPECT_EQ(next.out.find("the user's secret"), std::string::npos) << next.out;
}

TEST_P(SwappedDirectory, TheLaunchServiceRefusesItToo) {
  test::Service service(GetParam().user, "",
                        "[plugins.hostile_plugin]\nsandbox = \"" + GetParam().backend + "\"\n");
  swap_tmp_dir();
  const ProcessResult next = test::run_process(service.launch(
      {"--socket-dir", socket_dir_.string(), "--tmp-dir", tmp_dir_.string(), "--",
       service.install().add_binary(HOSTILE_PLUGIN), "read", (tmp_dir_ / "key").string()}));
  EXPECT_EQ(next.code, 125) << next.out << next.err;
  EXPECT_NE(next.err.find("is a symbolic link"), std::string::npos) << next.err;
  EXPECT_EQ(next.out.find("the user's secret"), std::string::npos) << next.out;
}

// A symlink made after the caller's check, as a plugin still running from launch 1 could:
// stage 1 opens every granted path itself, without following one, and refuses.
TEST_P(SwappedDirectory, StageOneRefusesASymlinkMadeAfterTheCallersCheck) {
  swap_tmp_dir();
  Spec spec;
  spec.plugin_name = "hostile";
  spec.binary_path = fs::canonical(plugin_).string();
  spec.socket_dir = socket_dir_.string();
  spec.tmp_dir = tmp_dir_.string();
  spec.args = {"read", (tmp_dir_ / "key").string()};
  spec.env = {"PATH=/usr/bin:/bin", "HOME=" + spec.tmp_dir, "TMPDIR=" + spec.tmp_dir};
  const std::string module =
      (install_.dir() / SANDBOX_HOST_MODULE_SUBDIR / ("backend_" + GetParam().backend + ".so"))
          .string();
  test::ProcessOptions options = test::with_env(
      {std::string(kEnvStage1) + "=" + GetParam().backend,
       std::string(kEnvSpec) + "=" + encode_stage1_payload({GetParam().backend, module, spec})});
  std::vector<std::string> argv = as_user();
  argv.push_back(install_.sandbox_host());
  const ProcessResult result = test::run_process(argv, options);
  EXPECT_EQ(result.code, kStage1ExitCode) << result.out << result.err;
  EXPECT_NE(result.err.find("is a symbolic link"), std::string::npos) << result.err;
  EXPECT_EQ(result.out.find("the user's secret"), std::string::npos) << result.out;
}

INSTANTIATE_TEST_SUITE_P(
    Backends, SwappedDirectory,
    ::testing::Values(Attack{User::root, "landlock"}, Attack{User::nobody, "landlock"},
                      Attack{User::root, "namespaces"}, Attack{User::nobody, "namespaces"}),
    [](const auto &info) { return info.param.backend + "_" + test::user_name(info.param.user); });

}  // namespace
}  // namespace sandbox_host
