// Test helpers for code that spawns sandboxed plugins (the C++ side of the Go package's
// sandboxtest, docs/design.md#the-go-package).
//
// The macros expand in the test's own translation unit, which links the sandbox-host
// library; this header itself needs nothing but the standard library and GoogleTest.
//
//   SANDBOX_HOST_TEST_MAIN()                  // main(): stage1() first, then the tests
//   TEST(Plugin, Runs) {
//     SANDBOX_HOST_SKIP_WITHOUT_BACKEND();    // skips with the probe's reason
//     sandbox_host::sandboxtest::TempSpec t("my-plugin", "/usr/bin/true");
//     ... launch t.spec ...
//   }
#pragma once

#include <sandbox_host/spec.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace sandbox_host::sandboxtest {

// A Spec over fresh temporary directories, removed again when it goes out of scope:
// SocketDir is a new directory under TMPDIR (or /tmp), TmpDir is SocketDir/tmp.
class TempSpec {
 public:
  TempSpec(std::string plugin_name, const std::filesystem::path &binary,
           Network network = Network::none) {
    std::string pattern = (base_dir() / "sandbox-host-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::system_error(errno, std::generic_category(), "mkdtemp " + pattern);
    }
    root_ = std::filesystem::canonical(pattern);
    std::filesystem::create_directory(root_ / "tmp");
    spec.plugin_name = std::move(plugin_name);
    spec.binary_path = std::filesystem::canonical(binary).string();
    spec.socket_dir = root_.string();
    spec.tmp_dir = (root_ / "tmp").string();
    spec.network = network;
  }
  TempSpec(const TempSpec &) = delete;
  TempSpec &operator=(const TempSpec &) = delete;
  ~TempSpec() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  // Hands both directories to uid:gid, for a plugin launched as another user.
  void chown_to(uid_t uid, gid_t gid) const {
    for (const auto &dir : {root_, root_ / "tmp"}) {
      if (::chown(dir.c_str(), uid, gid) != 0) {
        throw std::system_error(errno, std::generic_category(), "chown " + dir.string());
      }
    }
  }

  Spec spec;

 private:
  static std::filesystem::path base_dir() {
    const char *tmpdir = ::getenv("TMPDIR");
    return tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  }
  std::filesystem::path root_;
};

}  // namespace sandbox_host::sandboxtest

// main() of a test binary that spawns sandboxed plugins: stage1() must run first, since a
// Linux backend re-executes this very binary to set the sandbox up.
#define SANDBOX_HOST_TEST_MAIN()            \
  int main(int argc, char **argv) {         \
    ::sandbox_host::stage1();               \
    ::testing::InitGoogleTest(&argc, argv); \
    return RUN_ALL_TESTS();                 \
  }

// Skips the current test, naming the probe's reason, when no backend works on this host.
#define SANDBOX_HOST_SKIP_WITHOUT_BACKEND()                                           \
  do {                                                                                \
    try {                                                                             \
      (void)::sandbox_host::probe();                                                  \
    } catch (const std::exception &sandbox_host_probe_error) {                        \
      GTEST_SKIP() << "no sandbox backend here: " << sandbox_host_probe_error.what(); \
    }                                                                                 \
  } while (0)
