#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/launch_channel.hpp>
#include <sandbox_host/host/limits/plugin_cgroup.hpp>
#include <sandbox_host/host/sandbox_mark.hpp>
#include <sandbox_host/host/launch_client/spec_codec.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/seccomp_channel.hpp>
#include <sandbox_host/spec_abi.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {
namespace {

std::atomic<bool> wired{false};

BackendModule load_backend(const std::string &backend, const std::string &module_file) {
  std::shared_ptr<const LoadedModule> module;
  try {
    module = std::make_shared<const LoadedModule>(module_file, ModuleKind::backend);
  } catch (const std::exception &e) {
    exit_stage1_failure(std::string("load backend: ") + e.what());
  }
  if (module->name() != backend) {
    exit_stage1_failure("load backend: " + module_file + " is backend \"" + module->name() +
                        "\", not \"" + backend + "\"");
  }
  return BackendModule(std::move(module));
}

void check_backend(const std::string &written_for, const std::string &backend) {
  if (written_for != backend) {
    exit_stage1_failure("spec: written for backend \"" + written_for + "\", but " +
                        std::string(kEnvStage1) + " names \"" + backend + "\"");
  }
}

// A backend built before the Spec carried the environment execs the plugin with environ: it
// gets the plugin's now, after this process's loader and libc started with sandbox-host's.
// One built since execs with Spec::env, and this process keeps sandbox-host's to the end.
void give_older_backend_the_environment(const BackendModule &module,
                                        std::vector<std::string> &env) {
  if (module.module().abi().minor >= spec_since::env) return;
  ::clearenv();
  for (std::string &entry : env) {
    if (::putenv(entry.data()) != 0) exit_stage1_failure("env: putenv failed");
  }
}

[[noreturn]] void run_child(const std::string &backend, const std::string &spec_json) {
  // Static: putenv keeps pointers into its entries for the rest of the process.
  static Stage1Payload payload;
  try {
    payload = decode_stage1_payload(spec_json);
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
  check_backend(payload.backend, backend);
  const BackendModule module = load_backend(backend, payload.module_file);
  give_older_backend_the_environment(module, payload.spec.env);
  exit_stage1_failure(module.stage1(payload.spec));
}

// The launch a prepared sandbox receives; it lives as long as the process.
struct ReceivedLaunch {
  int channel = -1;
  bool launched = false;
  const BackendModule *module = nullptr;  // the backend that takes the launch
  Network network = Network::none;        // the one the sandbox was prepared for
  std::optional<LaunchMessage> message;
  std::optional<SpecAbiView> view;

  static const sh_spec *await(void *ctx, sh_writer *error) noexcept {
    auto &self = *static_cast<ReceivedLaunch *>(ctx);
    try {
      if (self.message) throw std::logic_error("a prepared sandbox takes one launch");
      report_ready(self.channel);
      self.message = receive_launch(self.channel);
      self.launched = true;  // the channel stays, close-on-exec, for report_status
      // Which namespaces exist was decided when the sandbox was prepared.
      if (self.message->spec.network != self.network) {
        throw std::runtime_error("network " + std::string(to_string(self.message->spec.network)) +
                                 ", but this sandbox was prepared for " +
                                 std::string(to_string(self.network)));
      }
      give_older_backend_the_environment(*self.module, self.message->spec.env);
      self.view.emplace(self.message->spec);
      return self.view->get();
    } catch (const std::exception &e) {
      write(error, e.what());
    } catch (...) {
      write(error, "unknown exception");
    }
    return nullptr;
  }
  static int32_t status_descriptor(void *ctx) noexcept {
    const auto &self = *static_cast<const ReceivedLaunch *>(ctx);
    return self.launched ? self.channel : -1;
  }
  static void report(void *ctx, int32_t status) noexcept {
    const auto &self = *static_cast<const ReceivedLaunch *>(ctx);
    // A host that is gone learns the status from stage 1's exit, or not at all.
    if (self.launched) (void)report_status(self.channel, status);
  }
};

[[noreturn]] void run_prepared(const std::string &backend, const std::string &prepared_json) {
  PreparedPayload payload;
  try {
    payload = decode_prepared_payload(prepared_json);
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
  check_backend(payload.backend, backend);
  // Inherited without close-on-exec; whatever the backend execs must not keep it.
  if (::fcntl(payload.control_fd, F_SETFD, FD_CLOEXEC) != 0) {
    exit_stage1_failure("prepare: control descriptor " + std::to_string(payload.control_fd) +
                        " is not open");
  }
  static const BackendModule module = load_backend(backend, payload.module_file);
  static ReceivedLaunch launch;
  launch.module = &module;
  launch.channel = payload.control_fd;
  launch.network = payload.network;
  static const sh_launch_source source{sizeof(sh_launch_source), &launch, &ReceivedLaunch::await,
                                       &ReceivedLaunch::status_descriptor, &ReceivedLaunch::report};
  exit_stage1_failure(module.stage1_prepared(payload.network, source));
}

// The channel for the seccomp filter's listener is inherited without close-on-exec; a backend
// that loads no filter of ours, and so never takes it, must not pass it on to the plugin.
void keep_seccomp_channel_from_the_plugin() {
  const char *value = ::getenv(std::string(kEnvSeccompChannel).c_str());
  if (value == nullptr) return;
  int fd = -1;
  const std::string_view text = value;
  std::from_chars(text.data(), text.data() + text.size(), fd);
  if (fd > STDERR_FILENO) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

std::optional<std::string> take_env(std::string_view name) {
  const std::string key(name);
  const char *value = ::getenv(key.c_str());
  std::optional<std::string> out;
  if (value != nullptr) out = value;
  ::unsetenv(key.c_str());
  return out;
}

}  // namespace

void stage1() {
  if (::getenv(std::string(kEnvStage1).c_str()) == nullptr) {
    wired = true;
    return;
  }
  // First: whatever fails after it, this process and every one it makes is a sandbox's for
  // the host's services (sandbox_mark.hpp).
  try {
    mark_this_process_sandboxed();
  } catch (const std::exception &e) {
    exit_stage1_failure(std::string("mark: ") + e.what());
  }
  keep_seccomp_channel_from_the_plugin();
  const std::string backend = *take_env(kEnvStage1);
  const std::optional<std::string> spec = take_env(kEnvSpec);
  const std::optional<std::string> prepared = take_env(kEnvPrepared);
  // Before anything of the sandbox exists, so that all of it and the plugin count.
  if (const std::optional<std::string> cgroups = take_env(kEnvCgroup)) {
    try {
      join_cgroups(*cgroups);
    } catch (const std::exception &e) {
      exit_stage1_failure(std::string("cgroup: ") + e.what());
    }
  }
  if (prepared) run_prepared(backend, *prepared);
  if (!spec) exit_stage1_failure("spec: " + std::string(kEnvSpec) + " is not set");
  if (spec->size() > kMaxLaunchMessage) {
    exit_stage1_failure("spec: " + std::to_string(spec->size()) + " bytes, over " +
                        std::to_string(kMaxLaunchMessage));
  }
  run_child(backend, *spec);
}

bool stage1_wired() noexcept {
  return wired;
}

}  // namespace sandbox_host
