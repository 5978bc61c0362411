#include <sandbox_host/host/module.hpp>
#include <sandbox_host/strings.hpp>

#include <boost/dll/shared_library_load_mode.hpp>

#include <cstddef>

namespace sandbox_host {
namespace fs = std::filesystem;

std::string_view to_string(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::backend:
      return "backend";
    case ModuleKind::broker_op:
      return "op";
    case ModuleKind::egress:
      return "egress";
  }
  return "unknown";
}

std::string module_file_name(ModuleKind kind, std::string_view name) {
  return std::string(to_string(kind)) + "_" + std::string(name) + ".so";
}

ModuleError::ModuleError(const fs::path &file, const std::string &what)
    : std::runtime_error("module " + file.string() + ": " + what), file_(file) {}

namespace {

constexpr uint32_t abi_kind(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::backend:
      return SH_KIND_BACKEND;
    case ModuleKind::broker_op:
      return SH_KIND_BROKER_OP;
    case ModuleKind::egress:
      return SH_KIND_EGRESS;
  }
  return 0;
}

// The kind's first table (ABI 1.0's; the egress kind's of 1.9); what later minors appended
// is read only where struct_size has it.
constexpr size_t table_size(ModuleKind kind) {
  switch (kind) {
    case ModuleKind::backend:
      return offsetof(sh_backend_v1, stage1_prepared);
    case ModuleKind::broker_op:
      return offsetof(sh_broker_op_v1, report);
    case ModuleKind::egress:
      return offsetof(sh_egress_v1, report);
  }
  return 0;
}

std::string kind_text(uint32_t kind) {
  switch (kind) {
    case SH_KIND_BACKEND:
      return "backend";
    case SH_KIND_BROKER_OP:
      return "broker-op";
    case SH_KIND_EGRESS:
      return "egress";
    default:
      return "unknown kind " + std::to_string(kind);
  }
}

// "a backend", "an egress".
std::string a_kind(uint32_t kind) {
  const std::string text = kind_text(kind);
  return (kind == SH_KIND_EGRESS ? "an " : "a ") + text;
}

}  // namespace

LoadedModule::LoadedModule(const fs::path &file, ModuleKind kind, const ModuleSettings &settings)
    : file_(file), kind_(kind) {
  const EntrySymbol entry = check_module_file(file);
  abi_ = entry.abi;
  const std::string &symbol = entry.name;
  try {
    library_.load(file, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception &e) {
    throw ModuleError(file, std::string("cannot load: ") + e.what());
  }
  using Entry = const sh_module_descriptor *();
  descriptor_ = entry.alias ? library_.get_alias<Entry>(symbol)() : library_.get<Entry>(symbol)();

  const auto *d = descriptor_;
  if (d == nullptr || d->struct_size < sizeof(sh_module_descriptor)) {
    throw ModuleError(file, "its entry returned no descriptor, or one smaller than ABI " +
                                std::to_string(kHostAbi.major) + ".0's");
  }
  if (d->abi_major != abi_.major || d->abi_minor != abi_.minor) {
    throw ModuleError(file, "descriptor says ABI " + std::to_string(d->abi_major) + "." +
                                std::to_string(d->abi_minor) + " but its entry symbol " + symbol);
  }
  name_ = to_view(d->name);
  version_ = to_view(d->version);
  summary_ = to_view(d->summary);
  if (d->kind != abi_kind(kind)) {
    throw ModuleError(
        file, "is " + a_kind(d->kind) + " module, expected " + a_kind(abi_kind(kind)) + " module");
  }
  if (file.filename() != module_file_name(kind, name_)) {
    throw ModuleError(file, "registers the name \"" + name_ + "\", so its file must be " +
                                module_file_name(kind, name_));
  }
  const auto *table_header = static_cast<const uint32_t *>(d->table);
  if (d->create == nullptr || d->destroy == nullptr || table_header == nullptr ||
      *table_header < table_size(kind)) {
    throw ModuleError(file, "incomplete descriptor: create, destroy or its " +
                                std::string(to_string(kind)) + " table is missing or short");
  }

  // The settings as the boundary's borrowed strings, alive for the create() call.
  std::vector<std::vector<sh_str>> values(settings.size());
  std::vector<sh_config_entry> entries;
  for (size_t i = 0; i < settings.size(); ++i) {
    for (const auto &value : settings[i].second) values[i].push_back(to_sh_str(value));
    entries.push_back({to_sh_str(settings[i].first), {values[i].data(), values[i].size()}});
  }
  sh_host_info host{sizeof(sh_host_info),
                    static_cast<uint16_t>(kHostAbi.major),
                    static_cast<uint16_t>(kHostAbi.minor),
                    to_sh_str(SANDBOX_HOST_VERSION),
                    {entries.data(), entries.size()}};
  StringSink error;
  if (d->create(&host, &instance_, error.writer()) != SH_OK || instance_ == nullptr) {
    instance_ = nullptr;
    throw ModuleError(file, "init failed: " + (error.text().empty() ? std::string("no reason given")
                                                                    : error.text()));
  }
}

LoadedModule::~LoadedModule() {
  if (instance_ != nullptr) descriptor_->destroy(instance_);
}

}  // namespace sandbox_host
