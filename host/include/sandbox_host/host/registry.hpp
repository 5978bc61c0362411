// The modules the config enables, found in the module directories and loaded once.
#pragma once

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/config.hpp>
#include <sandbox_host/host/module.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace sandbox_host {

struct ModuleFailure {
  ModuleKind kind;
  std::string name;
  std::string error;
};

class Registry {
 public:
  // settings: a module's own table ([ops.<name>], [egress.<name>]) by kind and name,
  // handed to the module when it loads.
  explicit Registry(std::vector<std::filesystem::path> module_dirs,
                    std::map<std::pair<ModuleKind, std::string>, ModuleSettings> settings = {});

  // Loads every module the config enables; a module that fails is recorded in failures()
  // and audited, and the others load on.
  void load_enabled(const Config &config, AuditSink &audit);

  // The module, loaded on first use; nullptr when it cannot be loaded, with the reason in
  // failure(kind, name). A failure is recorded and audited once, not retried.
  std::shared_ptr<const LoadedModule> acquire(ModuleKind kind, const std::string &name,
                                              AuditSink &audit);

  // The loaded module, or nullptr with the reason in failure(kind, name).
  std::shared_ptr<const LoadedModule> find(ModuleKind kind, const std::string &name) const;
  std::string failure(ModuleKind kind, const std::string &name) const;

  std::vector<std::shared_ptr<const LoadedModule>> modules() const;
  std::vector<ModuleFailure> failures() const;
  const std::vector<std::filesystem::path> &module_dirs() const noexcept { return dirs_; }

  // Finds and loads one module; throws ModuleError.
  std::shared_ptr<const LoadedModule> load(ModuleKind kind, const std::string &name);

 private:
  std::filesystem::path locate(ModuleKind kind, const std::string &name) const;

  std::vector<std::filesystem::path> dirs_;
  std::map<std::pair<ModuleKind, std::string>, ModuleSettings> settings_;
  mutable std::mutex mutex_;
  std::map<std::pair<ModuleKind, std::string>, std::shared_ptr<const LoadedModule>> loaded_;
  std::map<std::pair<ModuleKind, std::string>, std::string> failures_;
};

}  // namespace sandbox_host
