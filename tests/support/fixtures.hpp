// Shared pieces of the suite: configs over the test modules, temporary files, scoped
// environment changes, a captured audit sink, the report plugin's output, pipes and a
// sample launch message.
#pragma once

#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sandbox_host::test {

// Whether `done()` turned true within `limit`, asked every millisecond: for what another
// thread finishes at its own pace.
template <typename Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// module_dirs: the test modules first, then the project's own.
Config test_config(std::vector<std::string> backends, std::vector<std::string> priority,
                   std::vector<std::string> ops = {});

// A file with the given contents under a fresh temporary directory, both removed later.
class TempFile {
 public:
  explicit TempFile(const std::string &contents, const std::string &name = "file");
  ~TempFile();
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  const std::filesystem::path &path() const noexcept { return path_; }
  const std::filesystem::path &dir() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path path_;
};

// Sets (or unsets, with nullopt) one variable and restores it on destruction.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
  std::string name_;
  std::optional<std::string> previous_;
};

// A JSON-lines audit file for the test's lifetime; apply() points a config at it.
class AuditCapture {
 public:
  AuditCapture();
  Config apply(Config config) const;
  std::vector<std::map<std::string, std::string>> records() const;

 private:
  TempFile file_;
};

// What report_plugin printed.
struct PluginReport {
  int pid = 0, sid = 0, pgid = 0, pdeathsig = 0;
  unsigned uid = 0;
  std::vector<std::string> env;
  std::map<int, std::string> fds;  // fd -> target
  std::string cwd;
};
PluginReport parse_report(const std::string &out);

// The test user: nobody, for launches as an unprivileged user.
inline constexpr unsigned kNobody = 65534;

// sandbox-host, its modules and the report plugin copied where the test user can run them:
// the build tree may sit under a directory only root can enter (CI clones anywhere).
class UnprivilegedInstall {
 public:
  UnprivilegedInstall();
  std::string sandbox_host() const { return (dir_.dir() / "bin/sandbox-host").string(); }
  std::string sandbox_host_launch() const {
    return (dir_.dir() / "bin/sandbox-host-launch").string();
  }
  std::string report_plugin() const { return (dir_.dir() / "bin/report_plugin").string(); }
  // Copies one more binary into the install's bin/ and returns its path there.
  std::string add_binary(const std::string &binary) const;
  // Copies one more module into the install's module directory.
  void add_module(const std::string &module) const;
  // The install's own directory, readable and enterable by everyone.
  const std::filesystem::path &dir() const noexcept { return dir_.dir(); }

 private:
  TempFile dir_;
};

// An UnprivilegedInstall made on first use and removed when the test process exits, for a
// suite that needs nothing in it beyond sandbox-host as installed.
const UnprivilegedInstall &shared_install();

// argv prefix that runs a command as nobody:nogroup with no supplementary groups.
std::vector<std::string> as_nobody();

// A close-on-exec pipe.
struct Pipe {
  UniqueFd read, write;
};
Pipe make_pipe();

// A launch message with every field set, quotes, non-ASCII, empty and multi-line values.
LaunchMessage sample_launch();

}  // namespace sandbox_host::test
