// What the tests of [limits] share: the fixture LimitsTest, which launches a plugin with the
// real `sandbox-host run` under a [limits] table, as root and as nobody, in a cgroup `auto`
// finds or one it delegates to nobody (DelegatedCgroup), and reads what probe says; and the
// fork bomb it starts.
#pragma once

#include "backend_case.hpp"
#include "fixtures.hpp"
#include "launch_case_fixture.hpp"
#include "process.hpp"

#include <sandbox_host/host/limits/plugin_cgroup.hpp>

#include <sandbox_host/cgroup_mounts.hpp>

#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host::test::limits_harness {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using Case = BackendCase;
using User = BackendCase::User;

// Forks children that sleep until told to go, as many as the kernel lets it up to argv[1];
// prints how many, then waits for its stdin to close and takes every child with it.
inline constexpr const char *kForkBomb = R"(
import os, sys
children = []
refused = 0
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        break
    if pid == 0:
        os.read(0, 1)
        os._exit(0)
    children.append(pid)
print("forked", len(children), "refused", refused, flush=True)
sys.stdin.read()
for pid in children:
    os.waitpid(pid, 0)
)";

// A cgroup in each v1 hierarchy of memory, pids and cpu, owned by nobody, as an operator
// delegates one to the user a host runs as. nullopt where this host has no such hierarchies
// (on cgroup v2, moving nobody's stage 1 into it would need nobody's launcher inside it).
class DelegatedCgroup {
 public:
  static std::optional<DelegatedCgroup> make() {
    const cgroup::CgroupMounts mounts = cgroup::CgroupMounts::of_this_host();
    DelegatedCgroup made;
    made.path_ = "/sandbox-host-test-" + std::to_string(::getpid());
    for (const char *controller : {"memory", "pids", "cpu"}) {
      const auto mount = mounts.v1.find(controller);
      if (mount == mounts.v1.end()) return std::nullopt;
      const fs::path dir = mount->second / made.path_.substr(1);
      if (::mkdir(dir.c_str(), 0755) != 0) return std::nullopt;
      made.dirs_.push_back(dir);
      for (const fs::path &owned : {dir, dir / "cgroup.procs", dir / "tasks"}) {
        if (::chown(owned.c_str(), kNobody, kNobody) != 0) return std::nullopt;
      }
    }
    return made;
  }
  DelegatedCgroup() = default;
  DelegatedCgroup(DelegatedCgroup &&other) noexcept
      : path_(std::move(other.path_)), dirs_(std::exchange(other.dirs_, {})) {}
  DelegatedCgroup &operator=(DelegatedCgroup &&other) noexcept {
    std::swap(path_, other.path_);
    std::swap(dirs_, other.dirs_);
    return *this;
  }
  ~DelegatedCgroup() {
    for (const fs::path &dir : dirs_) ::rmdir(dir.c_str());
  }
  const std::string &path() const { return path_; }
  // The launches' cgroups left in it.
  std::size_t children() const {
    std::size_t count = 0;
    for (const fs::path &dir : dirs_) {
      for (const auto &entry : fs::directory_iterator(dir)) count += entry.is_directory();
    }
    return count;
  }

 private:
  std::string path_;
  std::vector<fs::path> dirs_;
};

class LimitsTest : public LaunchCaseTest {
 protected:
  LimitsTest() : LaunchCaseTest("limits") {}

  void TearDown() override {
    delegated_.reset();
    LaunchCaseTest::TearDown();
  }

  // Writes the [limits] table with body, in the cgroup this case's launches get. False, with
  // skip_ saying why, where this host gives them none.
  bool configure_with_cgroup(const std::string &body) {
    if (root()) {
      const CgroupPlacement placement = CgroupPlacement::find("auto");
      if (placement.version() == CgroupPlacement::Version::none) {
        skip_ = "no cgroup for root's launches here: " + placement.description();
        return false;
      }
      configure("[limits]\n" + body);
      return true;
    }
    delegated_ = DelegatedCgroup::make();
    if (!delegated_) {
      skip_ =
          "this host has no cgroup v1 hierarchies of memory, pids and cpu to delegate to "
          "nobody";
      return false;
    }
    configure("[limits]\ncgroup = \"" + delegated_->path() + "\"\n" + body);
    return true;
  }
  bool namespaces() const { return std::string(GetParam().backend) == "namespaces"; }

  void configure(const std::string &toml) const {
    std::ofstream(dir_ / "config.toml") << toml;
    fs::permissions(dir_ / "config.toml", fs::perms(0644));
  }

  ProcessResult bash(const std::string &script) const {
    return run_process(argv({"/bin/bash", "-c", script}), options());
  }

  // kForkBomb, trying `tries` forks, once it could fork no more.
  struct ForkBomb {
    Pipe stdin_pipe;
    std::unique_ptr<RunningProcess> process;
    std::string line;  // what it printed
    int forked = -1, refused = -1;

    // Lets it and its children end.
    ProcessResult release() {
      stdin_pipe.write = UniqueFd();
      return process->wait(60s);
    }
  };
  ForkBomb start_fork_bomb(int tries) const {
    ForkBomb bomb{make_pipe(), nullptr, {}};
    ProcessOptions bomb_options = options();
    bomb_options.stdin_fd = bomb.stdin_pipe.read.get();
    bomb.process = std::make_unique<RunningProcess>(
        argv({"/usr/bin/python3", "-c", kForkBomb, std::to_string(tries)}), bomb_options);
    if (const std::optional<std::string> line = bomb.process->read_line(60s)) {
      bomb.line = *line;
      std::istringstream words(*line);
      std::string forked_word, refused_word;
      words >> forked_word >> bomb.forked >> refused_word >> bomb.refused;
    }
    return bomb;
  }

  // This case's backend's rows of `sandbox-host probe --json` under the config, by limit.
  struct ProbeRows {
    std::map<std::string, Poco::JSON::Object::Ptr> by_limit;
    std::string out;
  };
  ProbeRows probe_rows() const {
    std::vector<std::string> command = argv({});
    command.erase(std::find(command.begin(), command.end(), "run"), command.end());
    command.insert(command.end(), {"probe", "--json", "--config", (dir_ / "config.toml").string()});
    const ProcessResult probe = run_process(command, options());
    ProbeRows rows{{}, probe.out + probe.err};
    if (probe.code != 0) return rows;
    Poco::JSON::Parser parser;
    const auto out = parser.parse(probe.out).extract<Poco::JSON::Object::Ptr>();
    const auto backend =
        out->getObject("limits")->getObject("backends")->getArray(GetParam().backend);
    for (std::size_t i = 0; backend && i < backend->size(); ++i) {
      const auto row = backend->getObject(static_cast<unsigned>(i));
      rows.by_limit[row->getValue<std::string>("limit")] = row;
    }
    return rows;
  }

  std::optional<DelegatedCgroup> delegated_;
  std::string skip_;
};

inline std::size_t occurrences(const std::string &text, const std::string &part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

}  // namespace sandbox_host::test::limits_harness
