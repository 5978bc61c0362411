// What the host learns about a module file before it runs any of the module's code.
#include <sandbox_host/host/module.hpp>

#include <boost/dll/library_info.hpp>

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>

namespace sandbox_host {
namespace fs = std::filesystem;

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "add this architecture's ELF machine"
#endif

std::string version_text(AbiVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor);
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// A module runs in the host, as the host's user: only that user or root may have written it,
// or the directory it is found in (where anyone who may write could put a file of the name
// the registry looks for), as ld.so's secure mode and sshd's StrictModes ask of what they
// trust. Checked on what the path resolves to; no other uid can replace it after the check.
void check_writers(const fs::path &file) {
  std::error_code ec;
  const fs::path resolved = fs::canonical(file, ec);
  if (ec) throw ModuleError(file, "cannot resolve the file: " + ec.message());
  for (const fs::path &path : {resolved, resolved.parent_path()}) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      throw ModuleError(file, "cannot stat " + path.string() + ": " + std::strerror(errno));
    }
    const char *what = path == resolved ? "the file" : "its directory";
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
      throw ModuleError(file, std::string(what) + " " + path.string() + " belongs to uid " +
                                  std::to_string(st.st_uid) + ", neither root nor uid " +
                                  std::to_string(::geteuid()) +
                                  ", which runs sandbox-host: a module runs in the host, so "
                                  "only they may have written it");
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      throw ModuleError(file, std::string(what) + " " + path.string() + " is mode " +
                                  octal_mode(st.st_mode) +
                                  ", writable by its group or by every user: a module runs in "
                                  "the host, so only its owner may write it (chmod go-w)");
    }
  }
}

// library_info trusts the ELF header's offsets; a file cut short must be refused first.
void check_elf_header(const fs::path &file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) throw ModuleError(file, "cannot stat the file");
  if (!S_ISREG(st.st_mode)) throw ModuleError(file, "not a regular file");

  Elf64_Ehdr header{};
  std::ifstream in(file, std::ios::binary);
  if (!in.read(reinterpret_cast<char *>(&header), sizeof header)) {
    throw ModuleError(file, "not an ELF shared object: " + std::to_string(st.st_size) +
                                " bytes, shorter than an ELF header");
  }
  if (std::string_view(reinterpret_cast<const char *>(header.e_ident), SELFMAG) != ELFMAG) {
    throw ModuleError(file, "not an ELF shared object: no ELF magic at its start");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != kHostMachine) {
    throw ModuleError(file, "ELF file for another architecture (e_machine " +
                                std::to_string(header.e_machine) + ", this host's is " +
                                std::to_string(kHostMachine) + ")");
  }
  if (header.e_type != ET_DYN) {
    throw ModuleError(
        file, "ELF file is not a shared object (e_type " + std::to_string(header.e_type) + ")");
  }
  const auto section_table_end =
      header.e_shoff + static_cast<uint64_t>(header.e_shnum) * header.e_shentsize;
  if (header.e_shoff == 0 || section_table_end > static_cast<uint64_t>(st.st_size)) {
    throw ModuleError(file, "truncated ELF file: its section headers end at byte " +
                                std::to_string(section_table_end) + " of " +
                                std::to_string(st.st_size));
  }
}

// "sandbox_host_module_v1_0" -> {1, 0}
std::optional<AbiVersion> parse_entry_symbol(std::string_view symbol) {
  constexpr std::string_view prefix = SANDBOX_HOST_ENTRY_PREFIX;
  if (!symbol.starts_with(prefix)) return std::nullopt;
  symbol.remove_prefix(prefix.size());
  auto underscore = symbol.find('_');
  if (underscore == std::string_view::npos) return std::nullopt;
  AbiVersion v;
  auto major = symbol.substr(0, underscore), minor = symbol.substr(underscore + 1);
  auto [pm, em] = std::from_chars(major.data(), major.data() + major.size(), v.major);
  auto [pn, en] = std::from_chars(minor.data(), minor.data() + minor.size(), v.minor);
  if (em != std::errc() || en != std::errc() || pm != major.data() + major.size() ||
      pn != minor.data() + minor.size()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

EntrySymbol check_module_file(const fs::path &file) {
  check_elf_header(file);
  check_writers(file);

  std::vector<std::string> aliases, exported;
  try {
    boost::dll::library_info info(file, true);
    aliases = info.symbols("boostdll");
    exported = info.symbols();
  } catch (const std::exception &e) {
    throw ModuleError(file, std::string("cannot read its ELF symbols: ") + e.what());
  }

  std::vector<EntrySymbol> found;
  for (const auto &symbol : exported) {
    if (auto v = parse_entry_symbol(symbol)) {
      bool alias = std::find(aliases.begin(), aliases.end(), symbol) != aliases.end();
      found.push_back({symbol, *v, alias});
    }
  }
  const std::string expected = SANDBOX_HOST_ENTRY_PREFIX + std::to_string(kHostAbi.major) +
                               "_<minor <= " + std::to_string(kHostAbi.minor) + ">";
  if (found.empty()) {
    throw ModuleError(file, "no entry symbol " + expected +
                                "; not a sandbox-host module, or built without a "
                                "SANDBOX_HOST_*_MODULE registration");
  }
  if (found.size() > 1) {
    throw ModuleError(file, "several entry symbols (" + found[0].name + ", " + found[1].name +
                                "); a module registers once");
  }
  const AbiVersion v = found.front().abi;
  if (v.major != kHostAbi.major) {
    throw ModuleError(file, "built for module ABI " + version_text(v) + ", this host speaks " +
                                version_text(kHostAbi) + " (the major version must match)");
  }
  if (v.minor > kHostAbi.minor) {
    throw ModuleError(file, "built for module ABI " + version_text(v) +
                                ", newer than this host's " + version_text(kHostAbi) +
                                "; upgrade sandbox-host or rebuild the module against SDK " +
                                version_text(kHostAbi));
  }
  return found.front();
}

}  // namespace sandbox_host
