#include "requester_env.hpp"

#include <algorithm>
#include <array>

namespace sandbox_host {
namespace {

// A variable name the broker may read from a requester's environment: [A-Za-z_][A-Za-z0-9_]*.
bool valid_env_name(std::string_view name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

// A variable requester_env refuses, by its name or, ending in "*", the prefix of its names.
struct RefusedEnvName {
  std::string_view name;
  std::string_view why;
};

// Variables that change how a host command, or the loader, shell or interpreter it runs
// under, behaves rather than carrying data to it: through requester_env a sandboxed
// requester would choose their values. No list of them can be complete.
constexpr std::string_view kLoader =
    "the dynamic loader reads it and can load code into the command";
constexpr std::string_view kLibc =
    "the C library reads it to load modules or data, or to tune itself";
constexpr std::string_view kBroker = "the broker sets it for the command itself";
constexpr std::string_view kShell =
    "a shell reads it to run code or to change how it parses a script";
constexpr std::string_view kInterpreter = "an interpreter reads it to load code or take options";
constexpr std::string_view kGit = "git reads it as configuration, and some run commands";
constexpr auto kRefusedRequesterEnv = std::to_array<RefusedEnvName>({
    // ld.so's LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT...; dyld's on macOS (seatbelt).
    {"LD_*", kLoader},
    {"DYLD_*", kLoader},
    // glibc: gconv modules are shared objects; locale and message data; malloc's tunables.
    {"GCONV_PATH", kLibc},
    {"LOCPATH", kLibc},
    {"NLSPATH", kLibc},
    {"MALLOC_*", kLibc},
    {"GLIBC_TUNABLES", kLibc},
    // CommandRules sets them before the requester's variables, which would replace them.
    {"PATH", kBroker},
    {"HOME", kBroker},
    {"LANG", kBroker},
    // sh and bash startup files, options, tracing, word splitting, cd, exported functions.
    {"BASH_ENV", kShell},
    {"ENV", kShell},
    {"SHELLOPTS", kShell},
    {"BASHOPTS", kShell},
    {"PS4", kShell},
    {"IFS", kShell},
    {"CDPATH", kShell},
    {"BASH_FUNC_*", kShell},
    // Module paths, startup files and option variables of Python, Perl, Ruby, Node and Java.
    {"PYTHONPATH", kInterpreter},
    {"PYTHONSTARTUP", kInterpreter},
    {"PYTHONHOME", kInterpreter},
    {"PERL5LIB", kInterpreter},
    {"PERL5OPT", kInterpreter},
    {"PERLLIB", kInterpreter},
    {"RUBYOPT", kInterpreter},
    {"RUBYLIB", kInterpreter},
    {"NODE_OPTIONS", kInterpreter},
    {"NODE_PATH", kInterpreter},
    {"JAVA_TOOL_OPTIONS", kInterpreter},
    {"_JAVA_OPTIONS", kInterpreter},
    // Every GIT_*: GIT_SSH_COMMAND, GIT_CONFIG_*, GIT_EXEC_PATH run commands, the rest
    // redirect its repository, configuration or hooks.
    {"GIT_*", kGit},
});

// The entry of kRefusedRequesterEnv that refuses name, if any.
const RefusedEnvName *refused_requester_env(std::string_view name) {
  for (const auto &refused : kRefusedRequesterEnv) {
    const bool prefix = refused.name.ends_with('*');
    if (prefix ? name.starts_with(refused.name.substr(0, refused.name.size() - 1))
               : name == refused.name) {
      return &refused;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> requester_env_names(const ConfigReader &r, const toml::node &node,
                                             const std::string &key) {
  auto names = r.strings(node, key, "environment variable names");
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string indexed = key + "[" + std::to_string(i) + "]";
    if (!valid_env_name(names[i])) {
      r.fail(ConfigReader::element_source(node, i), indexed,
             "\"" + names[i] +
                 "\" is not an environment variable name; allowed: A-Z, a-z, 0-9 and _, not "
                 "starting with a digit");
    }
    if (const auto *refused = refused_requester_env(names[i])) {
      r.fail(ConfigReader::element_source(node, i), indexed,
             "\"" + names[i] + "\" is refused" +
                 (refused->name.ends_with('*') ? ", as every " + std::string(refused->name) + " is"
                                               : std::string()) +
                 ": " + std::string(refused->why) +
                 "; name only variables that carry data to the command");
    }
  }
  return names;
}

}  // namespace sandbox_host
