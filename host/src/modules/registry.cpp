#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/registry.hpp>

#include <boost/algorithm/string/join.hpp>

namespace sandbox_host {
namespace fs = std::filesystem;

Registry::Registry(std::vector<fs::path> module_dirs,
                   std::map<std::pair<ModuleKind, std::string>, ModuleSettings> settings)
    : dirs_(std::move(module_dirs)), settings_(std::move(settings)) {}

fs::path Registry::locate(ModuleKind kind, const std::string &name) const {
  const std::string file = module_file_name(kind, name);
  std::vector<std::string> searched;
  for (const auto &dir : dirs_) {
    std::error_code ec;
    fs::path candidate = dir / file;
    if (fs::exists(candidate, ec)) return candidate;
    searched.push_back(dir.string());
  }
  throw ModuleNotFound(file, "not installed (module directories: " +
                                 (searched.empty() ? std::string("none configured")
                                                   : boost::algorithm::join(searched, ", ")) +
                                 ")");
}

std::shared_ptr<const LoadedModule> Registry::load(ModuleKind kind, const std::string &name) {
  auto key = std::make_pair(kind, name);
  {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  }
  static const ModuleSettings none;
  auto settings = settings_.find(key);
  auto module = std::make_shared<const LoadedModule>(
      locate(kind, name), kind, settings == settings_.end() ? none : settings->second);
  std::lock_guard lock(mutex_);
  failures_.erase(key);
  return loaded_.emplace(key, std::move(module)).first->second;
}

std::shared_ptr<const LoadedModule> Registry::acquire(ModuleKind kind, const std::string &name,
                                                      AuditSink &audit) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find({kind, name}); it != loaded_.end()) return it->second;
    if (failures_.count({kind, name}) != 0) return nullptr;
  }
  try {
    return load(kind, name);
  } catch (const ModuleNotFound &e) {
    std::lock_guard lock(mutex_);
    failures_[{kind, name}] = e.what();
  } catch (const std::exception &e) {
    {
      std::lock_guard lock(mutex_);
      failures_[{kind, name}] = e.what();
    }
    audit.record({"module", "", "module-load",
                  "load " + std::string(to_string(kind)) + " " + name + ": " + e.what(),
                  "see `sandbox-host modules`; disable it in the config if unused"});
  }
  return nullptr;
}

void Registry::load_enabled(const Config &config, AuditSink &audit) {
  for (const auto &name : config.backends_enabled) acquire(ModuleKind::backend, name, audit);
  for (const auto &name : config.ops_enabled) acquire(ModuleKind::broker_op, name, audit);
  if (config.egress && !config.egress->builtin()) {
    acquire(ModuleKind::egress, config.egress->implementation, audit);
  }
}

std::shared_ptr<const LoadedModule> Registry::find(ModuleKind kind, const std::string &name) const {
  std::lock_guard lock(mutex_);
  auto it = loaded_.find({kind, name});
  return it == loaded_.end() ? nullptr : it->second;
}

std::string Registry::failure(ModuleKind kind, const std::string &name) const {
  std::lock_guard lock(mutex_);
  auto it = failures_.find({kind, name});
  return it == failures_.end() ? std::string() : it->second;
}

std::vector<std::shared_ptr<const LoadedModule>> Registry::modules() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<const LoadedModule>> out;
  for (const auto &[key, module] : loaded_) out.push_back(module);
  return out;
}

std::vector<ModuleFailure> Registry::failures() const {
  std::lock_guard lock(mutex_);
  std::vector<ModuleFailure> out;
  for (const auto &[key, error] : failures_) out.push_back({key.first, key.second, error});
  return out;
}

}  // namespace sandbox_host
