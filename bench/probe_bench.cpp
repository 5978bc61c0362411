// What the namespaces backend's probe costs inside one process, without any process
// start-up around it. `sandbox-host run` calls the probe on every launch (a forced or
// configured backend is probed before it is used), so this is paid once per launch.
//
//   BM_LoadNamespacesModule   LoadedModule(backend_namespaces.so): ELF checks + dlopen +
//                             descriptor checks + instance (the host does this per launch,
//                             and stage 1 does it again after the re-exec)
//   BM_NamespacesProbe        BackendModule::probe() of that module: the project's code
//
// and, to split the probe into its parts, replicas of the probe child's system calls (the
// same unshare flags, map writes and tmpfs mount, written here, not the project's code),
// each reaped with a blocking waitpid:
//   BM_ForkExitWaitOnly       fork + _exit + waitpid: the floor of any probe child
//   BM_ReplicaProbe           the probe child: user, mount, pid and uts namespaces
//   BM_ReplicaProbePlusProc   the same plus pid 1 of the new pid namespace mounting a fresh
//                             /proc: what the probe adds where the host's /proc could refuse
//                             one (a container's)
//   BM_ReplicaProbePlusNetIpc the same plus net and ipc namespaces (what the probe created
//                             before it left them out; the difference is their cost)
// and one step of the sandbox's init that no trace shows from outside:
//   BM_SeccompFilterInChild   fork; the child sets no_new_privs and installs the default
//                             seccomp filter (backends/common, libseccomp builds the BPF
//                             program in user space), exits; blocking waitpid. Minus
//                             BM_ForkExitWaitOnly, that is what init pays for the filter.
//
// Run as the user the launches run as (bench/namespaces_report.py runs it as nobody):
//   probe_bench [--module PATH/backend_namespaces.so] [Google Benchmark flags]
#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/module.hpp>

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#ifndef NAMESPACES_MODULE
#error "NAMESPACES_MODULE must name backend_namespaces.so (set by bench/CMakeLists.txt)"
#endif

namespace {

std::string g_module = NAMESPACES_MODULE;

void BM_LoadNamespacesModule(benchmark::State &state) {
  for (auto _ : state) {
    sandbox_host::LoadedModule module(g_module, sandbox_host::ModuleKind::backend);
    benchmark::DoNotOptimize(module.instance());
  }
}

void BM_NamespacesProbe(benchmark::State &state) {
  auto module = std::make_shared<const sandbox_host::LoadedModule>(
      g_module, sandbox_host::ModuleKind::backend);
  const sandbox_host::BackendModule backend(module);
  {
    const auto report = backend.probe();
    if (!report.available) {
      state.SkipWithError(("the namespaces backend is not available: " + report.reason).c_str());
      return;
    }
  }
  for (auto _ : state) {
    const auto report = backend.probe();
    if (!report.available) {
      state.SkipWithError(("probe failed while timed: " + report.reason).c_str());
      return;
    }
  }
}

int write_file(const char *path, const std::string &text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  int result =
      ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) ? 0 : errno;
  ::close(fd);
  return result;
}

// The probe child's steps (userns_probe.cpp), reaped with a blocking waitpid. Returns the
// child's exit status: 0 when every step worked, else the errno of the first that failed.
int replica_probe(int flags, bool with_proc = false) {
  const std::string uid_map = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1";
  const std::string gid_map = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1";
  pid_t child = ::fork();
  if (child < 0) return errno;
  if (child == 0) {
    int result = ::unshare(flags) == 0 ? 0 : errno;
    if (result == 0) result = write_file("/proc/self/setgroups", "deny");
    if (result == 0) result = write_file("/proc/self/uid_map", uid_map);
    if (result == 0) result = write_file("/proc/self/gid_map", gid_map);
    if (result == 0 && ::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, nullptr) != 0) {
      result = errno;
    }
    if (result == 0 && with_proc) {
      const pid_t init = ::fork();
      if (init == 0) {
        ::_exit(::mount("proc", "/tmp", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid") == 0
                    ? 0
                    : errno & 0xff);
      }
      int status = 0;
      result = init > 0 && ::waitpid(init, &status, 0) == init && WIFEXITED(status)
                   ? WEXITSTATUS(status)
                   : ECHILD;
    }
    ::_exit(result & 0xff);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return errno;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

void run_replica(benchmark::State &state, int flags, bool with_proc = false) {
  for (auto _ : state) {
    if (int rc = replica_probe(flags, with_proc); rc != 0) {
      state.SkipWithError(("replica probe failed: " + std::string(std::strerror(rc))).c_str());
      return;
    }
  }
}

// userns_probe.cpp: net and ipc namespaces are left out of the probe.
constexpr int kProbeFlags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS;

void BM_ReplicaProbe(benchmark::State &state) {
  run_replica(state, kProbeFlags);
}
void BM_ReplicaProbePlusProc(benchmark::State &state) {
  run_replica(state, kProbeFlags, true);
}
void BM_ReplicaProbePlusNetIpc(benchmark::State &state) {
  run_replica(state, kProbeFlags | CLONE_NEWNET | CLONE_NEWIPC);
}

// The floor of any probe child: fork, _exit, blocking waitpid.
void BM_ForkExitWaitOnly(benchmark::State &state) {
  for (auto _ : state) {
    pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
  }
}

void BM_SeccompFilterInChild(benchmark::State &state) {
  for (auto _ : state) {
    pid_t child = ::fork();
    if (child == 0) {
      try {
        sandbox_host::backends::set_no_new_privs();
        sandbox_host::backends::install_seccomp_filter();
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("installing the seccomp filter failed");
      return;
    }
  }
}

BENCHMARK(BM_LoadNamespacesModule)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NamespacesProbe)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ForkExitWaitOnly)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplicaProbe)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplicaProbePlusProc)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReplicaProbePlusNetIpc)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SeccompFilterInChild)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char **argv) {
  std::vector<char *> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--module") == 0 && i + 1 < argc) {
      g_module = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  benchmark::AddCustomContext("module", g_module);
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
