// Spawn-to-exit of a sandboxed /bin/true as a long-running host sees it, beside its peers,
// in one process and one run. Each round measures every variant once, in turn, so they
// share the machine's conditions; between measurements the process sleeps --pause-ms and,
// for the pool, waits (untimed) until its replacement sandbox is ready, so that no
// variant's background work lands in another's measurement.
//
//   bare        posix_spawn of the plugin
//   unshare     posix_spawn of `unshare -Urmpfn <plugin>`
//   bwrap       posix_spawn of bubblewrap with the isolation given after --bwrap
//   cli         posix_spawn of `<sandbox-host> run -- <plugin>` (a one-shot launcher)
//   host        Host::command() + spawn() in this process (a long-running host, no pool)
//   pool        SandboxPool::launch() in this process (a long-running host with a pool)
//
// Prints one JSON object: per variant, every run's wall time (ns) and the CPU time of the
// processes it waited for. Run it with CLAWPATROL_SANDBOX_BACKEND=namespaces; it must be
// able to re-exec itself, so main() calls stage1() first. bench/launch_report.py drives it.
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/sandbox_pool.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/unique_fd.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

using namespace sandbox_host;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &message) {
  std::cerr << "launch_bench: " << message << "\n";
  std::exit(2);
}

double cpu_seconds(const rusage &usage) {
  auto seconds = [](const timeval &t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double children_cpu() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  return cpu_seconds(usage);
}

// Runs argv with stdio on /dev/null and waits; its exit status must be 0.
void spawn_and_wait(const std::vector<std::string> &argv, int null) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_adddup2(&actions, null, fd);
  std::vector<char *> raw;
  for (const auto &arg : argv) raw.push_back(const_cast<char *>(arg.c_str()));
  raw.push_back(nullptr);
  pid_t pid = 0;
  int error = ::posix_spawnp(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) die("spawn " + argv[0] + ": " + std::strerror(error));
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    die(argv[0] + " did not exit 0 (status " + std::to_string(status) + ")");
  }
}

void wait_ok(Child &child, const char *what) {
  ExitStatus status = child.wait();
  if (status.shell_status() != 0) {
    die(std::string(what) + ": the sandboxed plugin exited " +
        std::to_string(status.shell_status()));
  }
}

struct Variant {
  std::string name;
  std::function<void()> run;
  std::vector<long long> ns;
  double cpu = 0;  // seconds, all runs
};

}  // namespace

int main(int argc, char **argv) {
  sandbox_host::stage1();

  int runs = 200, warmup = 20, pause_ms = 5;
  std::string plugin = "/bin/true", sandbox_host_exe;
  std::vector<std::string> bwrap, only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--runs")
      runs = std::stoi(value());
    else if (arg == "--warmup")
      warmup = std::stoi(value());
    else if (arg == "--pause-ms")
      pause_ms = std::stoi(value());
    else if (arg == "--plugin")
      plugin = value();
    else if (arg == "--sandbox-host")
      sandbox_host_exe = value();
    else if (arg == "--only")
      only.push_back(value());
    else if (arg == "--bwrap") {
      bwrap.assign(argv + i + 1, argv + argc);
      break;
    } else
      die("unknown argument " + arg);
  }
  if (sandbox_host_exe.empty()) die("--sandbox-host is required");
  if (bwrap.empty()) die("--bwrap ARGS... is required (bubblewrap's command line, plugin last)");

  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) die("open /dev/null");
  // The plugin's SocketDir and TmpDir, made once, as a gateway keeps one per plugin.
  char dir_template[] = "/tmp/launch-bench-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) die("mkdtemp");
  const std::string dir = std::filesystem::canonical(dir_template).string();

  Host host(load_config_or_defaults(std::nullopt));
  Spec spec;
  spec.plugin_name = "bench";
  spec.binary_path = std::filesystem::canonical(plugin).string();
  spec.socket_dir = dir;
  spec.tmp_dir = dir;
  spec.network = Network::none;
  const std::string mode = host.mode_for(spec.plugin_name);
  SandboxPool pool(host, mode, spec.network);
  if (!pool.preparing()) die("backend " + mode + " does not prepare sandboxes");
  const Stdio quiet{null, null, null};

  std::vector<Variant> variants{
      {"bare", [&] { spawn_and_wait({plugin}, null); }, {}, 0},
      {"unshare",
       [&] {
         spawn_and_wait({"unshare", "-Urmpfn", plugin}, null);
       },
       {},
       0},
      {"bwrap", [&] { spawn_and_wait(bwrap, null); }, {}, 0},
      {"cli",
       [&] {
         spawn_and_wait({sandbox_host_exe, "run", "--", plugin}, null);
       },
       {},
       0},
      {"host",
       [&] {
         Child child = spawn(host.command(spec, mode), {}, quiet);
         wait_ok(child, "host");
       },
       {},
       0},
      {"pool",
       [&] {
         Child child = pool.launch(spec, quiet);
         wait_ok(child, "pool");
       },
       {},
       0},
  };
  if (!only.empty()) {
    std::erase_if(variants, [&](const Variant &v) {
      return std::find(only.begin(), only.end(), v.name) == only.end();
    });
  }

  for (int round = -warmup; round < runs; ++round) {
    for (Variant &variant : variants) {
      if (pool.wait_ready(std::chrono::seconds(10)) != 1) die("the pool's sandbox is not ready");
      std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      const double cpu_before = children_cpu();
      const auto start = Clock::now();
      variant.run();
      const auto stop = Clock::now();
      if (round < 0) continue;
      variant.ns.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(stop - start).count());
      variant.cpu += children_cpu() - cpu_before;
    }
  }
  std::filesystem::remove_all(dir);

  const PoolStats &stats = pool.stats();
  std::cout << "{\"runs\": " << runs << ", \"pause_ms\": " << pause_ms
            << ", \"pool\": {\"prepared_launches\": " << stats.prepared_launches
            << ", \"cold_launches\": " << stats.cold_launches << ", \"failed\": " << stats.failed
            << "}, \"variants\": {";
  for (size_t v = 0; v < variants.size(); ++v) {
    std::cout << (v ? ", " : "") << "\"" << variants[v].name
              << "\": {\"cpu_seconds\": " << variants[v].cpu << ", \"ns\": [";
    for (size_t i = 0; i < variants[v].ns.size(); ++i) {
      std::cout << (i ? ", " : "") << variants[v].ns[i];
    }
    std::cout << "]}";
  }
  std::cout << "}}\n";
}
