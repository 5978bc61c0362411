#include <sandbox_host/host/backend.hpp>
#include <sandbox_host/host/env_names.hpp>
#include <sandbox_host/host/spec_codec.hpp>
#include <sandbox_host/host/stage1.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

namespace sandbox_host {
namespace {

std::atomic<bool> wired{false};

[[noreturn]] void run_child(const std::string &backend, const std::string &spec_json) {
  Stage1Payload payload;
  try {
    payload = decode_stage1_payload(spec_json);
  } catch (const std::exception &e) {
    exit_stage1_failure(e.what());
  }
  if (payload.backend != backend) {
    exit_stage1_failure("spec: written for backend \"" + payload.backend + "\", but " +
                        std::string(kEnvStage1) + " names \"" + backend + "\"");
  }
  std::shared_ptr<const LoadedModule> module;
  try {
    module = std::make_shared<const LoadedModule>(payload.module_file, ModuleKind::backend);
  } catch (const std::exception &e) {
    exit_stage1_failure(std::string("load backend: ") + e.what());
  }
  if (module->name() != backend) {
    exit_stage1_failure("load backend: " + payload.module_file + " is backend \"" + module->name() +
                        "\", not \"" + backend + "\"");
  }
  exit_stage1_failure(BackendModule(module).stage1(payload.spec));
}

}  // namespace

void stage1() {
  const char *backend = ::getenv(std::string(kEnvStage1).c_str());
  if (backend == nullptr) {
    wired = true;
    return;
  }
  std::string backend_name = backend;
  const char *spec = ::getenv(std::string(kEnvSpec).c_str());
  std::string spec_json = spec != nullptr ? spec : "";
  ::unsetenv(std::string(kEnvStage1).c_str());
  ::unsetenv(std::string(kEnvSpec).c_str());
  if (spec == nullptr) exit_stage1_failure("spec: " + std::string(kEnvSpec) + " is not set");
  run_child(backend_name, spec_json);
}

bool stage1_wired() noexcept {
  return wired;
}

}  // namespace sandbox_host
