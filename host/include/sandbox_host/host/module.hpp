// One loaded module: checked from its ELF symbols before any of its code runs, then
// loaded, its descriptor validated and one instance created.
#pragma once

#include <sandbox_host/abi.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {

enum class ModuleKind { backend, broker_op, egress };

std::string_view to_string(ModuleKind kind);

// A module refused: the message names the file, what was found and what was expected.
class ModuleError : public std::runtime_error {
 public:
  ModuleError(const std::filesystem::path &file, const std::string &what);
  const std::filesystem::path &file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
};

// No module file of that name in any module directory: not a refusal, nothing to audit.
class ModuleNotFound : public ModuleError {
 public:
  using ModuleError::ModuleError;
};

struct AbiVersion {
  unsigned major = 0;
  unsigned minor = 0;
  friend bool operator==(const AbiVersion &, const AbiVersion &) = default;
};

inline constexpr AbiVersion kHostAbi{SANDBOX_HOST_ABI_MAJOR, SANDBOX_HOST_ABI_MINOR};

// A module's entry: a Boost.DLL alias (what the SDK's macros export), or a plain exported
// C function of the same name (a module written in C).
struct EntrySymbol {
  std::string name;
  AbiVersion abi;
  bool alias = false;
};

// Reads the module's entry symbol from its ELF file without loading it; the ABI version is
// in the symbol's name. Throws ModuleError for a file that is not an ELF shared object, is
// truncated, has no or several entry symbols, or speaks another ABI.
EntrySymbol check_module_file(const std::filesystem::path &file);

// A module's own settings (an operation's [ops.<name>] table, an egress module's
// [egress.<name>]), key and values as text, in
// the order the operator wrote them.
using ModuleSettings = std::vector<std::pair<std::string, std::vector<std::string>>>;

class LoadedModule {
 public:
  // Checks, loads and instantiates the module at file, which must be of kind `kind`, with
  // settings handed to its create().
  LoadedModule(const std::filesystem::path &file, ModuleKind kind,
               const ModuleSettings &settings = {});
  ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;

  const std::filesystem::path &file() const noexcept { return file_; }
  ModuleKind kind() const noexcept { return kind_; }
  const std::string &name() const noexcept { return name_; }
  const std::string &version() const noexcept { return version_; }
  const std::string &summary() const noexcept { return summary_; }
  AbiVersion abi() const noexcept { return abi_; }
  void *instance() const noexcept { return instance_; }
  const void *table() const noexcept { return descriptor_->table; }

 private:
  std::filesystem::path file_;
  ModuleKind kind_;
  // Declared before anything that points into the library, so it is unloaded last.
  boost::dll::shared_library library_;
  const sh_module_descriptor *descriptor_ = nullptr;
  void *instance_ = nullptr;
  std::string name_, version_, summary_;
  AbiVersion abi_;
};

// The file name the host looks for: backend_<name>.so, op_<name>.so or egress_<name>.so.
std::string module_file_name(ModuleKind kind, std::string_view name);

}  // namespace sandbox_host
