#include "podman.hpp"

#include <Poco/Base64Decoder.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <sstream>

namespace sandbox_host::test::container {
namespace fs = std::filesystem;

void PrintTo(const Case &c, std::ostream *out) {
  *out << (c.user == User::root ? "root" : "nobody") << "_"
       << (c.seccomp == Seccomp::runtime_default ? "podman_seccomp"
           : c.seccomp == Seccomp::docker_like   ? "docker_like_seccomp"
                                                 : "deploy_seccomp")
       << "_" << (c.proc == Proc::masked ? "masked_proc" : "unmasked_proc")
       << (c.privileges == Privileges::none ? "_no_privileges" : "");
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  std::ostringstream name;
  PrintTo(info.param, &name);
  return name.str();
}

std::vector<Case> every_case() {
  std::vector<Case> cases;
  for (User user : {User::root, User::nobody}) {
    for (Seccomp seccomp :
         {Seccomp::runtime_default, Seccomp::docker_like, Seccomp::deploy_namespaces}) {
      for (Proc proc : {Proc::masked, Proc::unmasked}) cases.push_back({user, seccomp, proc});
    }
  }
  return cases;
}

std::vector<Case> root_cases() {
  std::vector<Case> cases;
  for (const Case &c : every_case()) {
    if (c.user == User::root) cases.push_back(c);
  }
  return cases;
}

std::vector<Case> kubernetes_cases() {
  return {{User::nobody, Seccomp::deploy_namespaces, Proc::unmasked, Privileges::none},
          {User::nobody, Seccomp::docker_like, Proc::masked, Privileges::none},
          {User::root, Seccomp::deploy_namespaces, Proc::unmasked, Privileges::none}};
}

std::ostream &operator<<(std::ostream &out, const StepResult &step) {
  return out << "exit " << step.code << "\nstdout:\n" << step.out << "stderr:\n" << step.err;
}

std::string shell_words(const std::vector<std::string> &argv) {
  std::string line;
  for (const std::string &word : argv) {
    if (!line.empty()) line += ' ';
    line += '\'';
    for (char ch : word) {
      if (ch == '\'') {
        line += "'\\''";
      } else {
        line += ch;
      }
    }
    line += '\'';
  }
  return line;
}

namespace {

std::optional<std::string> on_path(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = dir + "/" + name;
    if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// podman's default ulimits are higher than a machine's hard limits may be, and then no
// container starts. Nor do this process's own hard limits always do: runc is conmon's child,
// and conmon may have been started with lower ones (32768 processes where this process had
// 96367). 4096 is under any of them, and as many files as sandbox-host's own default limit.
std::string bounded_limit(int resource) {
  constexpr rlim_t kCeiling = 4096;
  rlimit limit{};
  ::getrlimit(resource, &limit);
  const rlim_t value = limit.rlim_max < kCeiling ? limit.rlim_max : kCeiling;
  return std::to_string(value) + ":" + std::to_string(value);
}

std::string random_name() {
  std::random_device device;
  std::ostringstream name;
  name << "sandbox-host-test-" << std::hex << device() << device();
  return name.str();
}

std::string decode(const std::string &base64) {
  std::istringstream in(base64);
  Poco::Base64Decoder decoder(in);
  std::ostringstream out;
  out << decoder.rdbuf();
  return out.str();
}

// runc, not crun: crun refuses a host whose cgroups are hybrid (v1 with a v2 unified
// mount), and the cgroupfs manager, since the test starts no systemd scope.
std::vector<std::string> podman_prefix(const std::string &podman, const std::string &name) {
  return {podman,
          "run",
          "--rm",
          "--name",
          name,
          "--runtime",
          "runc",
          "--cgroup-manager",
          "cgroupfs",
          "--network",
          "none",
          "--ulimit",
          "nofile=" + bounded_limit(RLIMIT_NOFILE),
          "--ulimit",
          "nproc=" + bounded_limit(RLIMIT_NPROC)};
}

// One line per step ("step <exit> <stdout as base64> <stderr as base64>"), then "done": the
// steps' own output never mixes with the framing, whatever bytes it holds.
std::string script_of(const std::vector<std::string> &steps) {
  std::string script = "d=$(mktemp -d) || exit 97\n";
  for (const std::string &step : steps) {
    script += "( " + step + "\n) </dev/null >\"$d/out\" 2>\"$d/err\"\n";
    script +=
        "printf 'step %s ' \"$?\"; base64 -w0 \"$d/out\"; printf ' '; "
        "base64 -w0 \"$d/err\"; printf '\\n'\n";
  }
  script += "rm -rf \"$d\"\nprintf 'done\\n'\n";
  return script;
}

std::vector<StepResult> parse_steps(const std::string &out, bool &complete) {
  std::vector<StepResult> steps;
  complete = false;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line == "done") {
      complete = true;
      continue;
    }
    std::vector<std::string> fields;
    std::istringstream words(line);
    for (std::string word; std::getline(words, word, ' ');) fields.push_back(word);
    // An empty last field leaves no word behind getline.
    if (!line.empty() && line.back() == ' ') fields.emplace_back();
    if (fields.size() != 4 || fields[0] != "step") continue;
    steps.push_back({std::stoi(fields[1]), decode(fields[2]), decode(fields[3])});
  }
  return steps;
}

// Why no container at all starts here, or nullopt when a plain one does: a case whose own
// settings break the container is a failure, not a skip.
std::optional<std::string> why_no_container(const std::string &podman) {
  const std::string name = random_name();
  std::vector<std::string> argv = podman_prefix(podman, name);
  for (const char *word : {"--rootfs", "/:O", "/bin/true"}) argv.push_back(word);
  ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  const ProcessResult result = run_process(argv, options);
  if (result.code == 0) return std::nullopt;
  return "podman could not start even a plain container here (exit " + std::to_string(result.code) +
         "): " + result.err;
}

}  // namespace

ContainerRun run_in_container(const Case &c, const std::vector<std::string> &steps,
                              const std::vector<fs::path> &mounts,
                              std::chrono::milliseconds timeout) {
  ContainerRun run;
  if (::geteuid() != 0) {
    run.unavailable = "needs root: podman's rootful containers over the host's own root";
    return run;
  }
  const auto podman = on_path("podman");
  if (!podman) {
    run.unavailable = "podman is not installed (scripts/setup.sh installs it)";
    return run;
  }
  if (!on_path("runc")) {
    run.unavailable = "runc is not installed (scripts/setup.sh installs it)";
    return run;
  }
  const std::string name = random_name();
  std::vector<std::string> argv = podman_prefix(*podman, name);
  if (c.user == User::nobody) {
    argv.push_back("--user");
    argv.push_back("65534:65534");
  }
  if (c.seccomp != Seccomp::runtime_default) {
    argv.push_back("--security-opt");
    argv.push_back(std::string("seccomp=") + (c.seccomp == Seccomp::docker_like
                                                  ? DOCKER_LIKE_SECCOMP
                                                  : DEPLOY_NAMESPACES_SECCOMP));
  }
  if (c.privileges == Privileges::none) {
    for (const char *word : {"--cap-drop", "ALL", "--security-opt", "no-new-privileges"}) {
      argv.push_back(word);
    }
  }
  if (c.proc == Proc::unmasked) {
    // Kubernetes' procMount: Unmasked leaves no path masked or read-only, as ALL does.
    argv.push_back("--security-opt");
    argv.push_back("unmask=ALL");
  }
  for (const fs::path &mount : mounts) {
    argv.push_back("--volume");
    argv.push_back(mount.string() + ":" + mount.string() + ":ro");
  }
  for (const std::string &word : {std::string("--rootfs"), std::string("/:O"),
                                  std::string("/bin/sh"), std::string("-c"), script_of(steps)}) {
    argv.push_back(word);
  }
  ProcessOptions options;
  options.timeout = timeout;
  run.podman = run_process(argv, options);
  if (run.podman.timed_out) {
    // Killing podman leaves its container to conmon.
    ProcessOptions quiet;
    quiet.timeout = std::chrono::seconds(30);
    run_process({*podman, "rm", "--force", "--time", "0", name}, quiet);
  }
  bool complete = false;
  run.steps = parse_steps(run.podman.out, complete);
  if (!complete && !run.podman.timed_out) {
    if (auto why = why_no_container(*podman)) {
      run.steps.clear();
      run.unavailable = why;
    }
  }
  return run;
}

}  // namespace sandbox_host::test::container
