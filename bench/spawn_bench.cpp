// Spawn-to-exit of `sandbox-host run` on the `off` backend beside a bare spawn of the same
// plugin binary. Each iteration is one posix_spawn + wait4 of the whole command, with
// stdin/stdout/stderr on /dev/null, so the time is what a caller of the command waits for.
//
// bench/report.py runs this with --benchmark_repetitions=5 and writes docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char **environ;

#ifndef SANDBOX_HOST_EXE
#error "SANDBOX_HOST_EXE must name the sandbox-host executable (set by bench/CMakeLists.txt)"
#endif

namespace {

constexpr const char *kPlugin = "/bin/true";
constexpr const char *kConfigText = "[plugins.bench]\nsandbox = \"off\"\n";

// The temporary config file; removed at exit.
std::string g_config_path;

void remove_config() {
  if (!g_config_path.empty()) {
    ::unlink(g_config_path.c_str());
    g_config_path.clear();
  }
}

bool write_config(std::string &error) {
  const char *base = ::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && base[0] == '/' ? base : "/tmp") + "/spawn-bench-XXXXXX.toml";
  const int fd = ::mkstemps(pattern.data(), 5);
  if (fd < 0) {
    error = "create " + pattern + ": " + std::strerror(errno);
    return false;
  }
  g_config_path = pattern;
  std::atexit(remove_config);
  const std::size_t size = std::strlen(kConfigText);
  const bool ok = ::write(fd, kConfigText, size) == static_cast<ssize_t>(size);
  if (!ok) error = "write " + pattern + ": " + std::strerror(errno);
  ::close(fd);
  return ok;
}

struct Outcome {
  int spawn_errno = 0;     // posix_spawn or wait4 failed
  int status = 0;          // wait status
  long max_rss_kib = 0;    // largest resident set of the child or any descendant it waited for
  double cpu_seconds = 0;  // user + system time of the child and its waited-for descendants

  bool exited_zero() const {
    return spawn_errno == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  std::string describe() const {
    if (spawn_errno != 0) return std::string("spawn failed: ") + std::strerror(spawn_errno);
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "wait status " + std::to_string(status);
  }
};

// One whole command, spawn to exit.
Outcome spawn_and_wait(const std::vector<std::string> &command) {
  std::vector<char *> argv;
  argv.reserve(command.size() + 1);
  for (const auto &arg : command) argv.push_back(const_cast<char *>(arg.c_str()));
  argv.push_back(nullptr);

  Outcome outcome;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    outcome.spawn_errno = rc;
    return outcome;
  }
  rusage usage{};
  while (::wait4(pid, &outcome.status, 0, &usage) < 0) {
    if (errno != EINTR) {
      outcome.spawn_errno = errno;
      return outcome;
    }
  }
  outcome.max_rss_kib = usage.ru_maxrss;
  outcome.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                        static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return outcome;
}

std::string joined(const std::vector<std::string> &command) {
  std::string text;
  for (const auto &arg : command) text += (text.empty() ? "" : " ") + arg;
  return text;
}

void run_spawn_benchmark(benchmark::State &state, const std::vector<std::string> &command) {
  // Once before timing: the command must work, or the numbers mean nothing.
  const Outcome check = spawn_and_wait(command);
  if (!check.exited_zero()) {
    state.SkipWithError(("`" + joined(command) + "` did not exit 0 (" + check.describe() +
                         "); run it by hand to see its stderr")
                            .c_str());
    return;
  }
  long max_rss_kib = check.max_rss_kib;
  double cpu_seconds = 0;
  for (auto _ : state) {
    const Outcome outcome = spawn_and_wait(command);
    if (!outcome.exited_zero()) {
      state.SkipWithError(
          ("`" + joined(command) + "` failed while timed: " + outcome.describe()).c_str());
      return;
    }
    max_rss_kib = std::max(max_rss_kib, outcome.max_rss_kib);
    cpu_seconds += outcome.cpu_seconds;
  }
  state.counters["max_rss_KiB"] = benchmark::Counter(static_cast<double>(max_rss_kib));
  state.counters["child_cpu_ms"] =
      benchmark::Counter(cpu_seconds * 1e3, benchmark::Counter::kAvgIterations);
}

void BM_BareSpawn(benchmark::State &state) {
  run_spawn_benchmark(state, {kPlugin});
}

void BM_SandboxHostRunOff(benchmark::State &state) {
  if (g_config_path.empty()) {
    state.SkipWithError("no config file was written");
    return;
  }
  run_spawn_benchmark(state, {SANDBOX_HOST_EXE, "run", "--config", g_config_path, "--name", "bench",
                              "--", kPlugin});
}

double max_of(const std::vector<double> &values) {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

// Fixed iteration counts keep one repetition of both benchmarks to a few seconds on 2 cores
// (bare: ~1 ms each, sandbox-host run: ~10-20 ms each), so 5 repetitions finish well
// under a minute. Real time: the parent only waits, its CPU time says nothing.
BENCHMARK(BM_BareSpawn)
    ->Iterations(2000)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);
BENCHMARK(BM_SandboxHostRunOff)
    ->Iterations(500)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->ComputeStatistics("max", max_of);

}  // namespace

int main(int argc, char **argv) {
  std::string error;
  if (!write_config(error)) {
    // BM_SandboxHostRunOff reports the missing config; the bare spawn still runs.
    std::fprintf(stderr, "spawn_bench: %s\n", error.c_str());
    remove_config();
  }
  benchmark::AddCustomContext("sandbox_host", SANDBOX_HOST_EXE);
  benchmark::AddCustomContext("plugin", kPlugin);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  remove_config();
  return 0;
}
