// An agent session's policy (docs/agent-policy.md): what its commands and the harness's file
// tools may read, write and reach. One model, enforced by sandbox-host's own backends
// (sandbox-host run --policy) and rendered into Claude Code's managed settings.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host::policy {

// Set in every session the policy holds, for the hook to know it. These three names are read
// by programs outside this repository: docs/design.md#environment-variables.
inline constexpr std::string_view kEnvSandbox = "CLAWPATROL_SANDBOX";
// Set, with kEnvSandbox, in a call the broker runs on the host for a sandboxed session: the
// broker holds it instead of a sandbox.
inline constexpr std::string_view kEnvBrokered = "CLAWPATROL_SANDBOX_BROKERED";
// Set by the sandbox runtime in every command it holds; the host never has it.
// sandbox-host run --policy sets it too.
inline constexpr std::string_view kEnvRuntime = "SANDBOX_RUNTIME";
// The harness's tools that read or write files outside the sandbox
// (docs/design.md#agent-policy-names).
inline constexpr std::array<std::string_view, 7> kFileTools{
    "Read", "Grep", "Glob", "Edit", "MultiEdit", "Write", "NotebookEdit"};
// The one other tool the hook answers for: its commands run in Claude Code's sandbox, which
// makes the session's working directory writable, so the hook refuses Bash in a session
// started where the policy does not let commands write.
inline constexpr std::string_view kBashTool = "Bash";
// Where a policy file is looked for when none is named.
inline constexpr const char *kDefaultPolicyPath = "/etc/sandbox-host/agent-policy.toml";

// Whom a sandbox holds to the policy: the commands a harness runs, or the harness itself
// (`run --policy --harness`), which also writes tool_write.
enum class ViewFor { commands, harness };

struct Policy {
  // Denied for reading, apart from read and write.
  std::string home;
  // The user's runtime directory, denied like home apart from egress; "" for none.
  std::string runtime;
  // Paths (under home, mostly) that may be read.
  std::vector<std::string> read;
  // Paths that may be written, and read.
  std::vector<std::string> write;
  // Paths that may be neither read nor written, inside every allow.
  std::vector<std::string> deny;
  // The harness's config directory, which commands never write; "" for none.
  std::string harness;
  // Paths only the harness's file tools may write (a component may be a glob: *, ?, [..]).
  std::vector<std::string> tool_write;
  // The hosts commands reach (through the egress proxy).
  std::vector<std::string> domains;
  // The egress proxy's port on the host's loopback; 0 for none.
  int proxy_port = 0;
  // The sandbox-host binary the rendered hook runs.
  std::string exe;
  // Variables the policy sets besides kEnvSandbox.
  std::map<std::string, std::string> vars;
  // The egress proxy's directory (CA, gh's login), readable inside runtime; "" for none.
  std::string egress;
  // The file it was read from, for messages; "" when built in code.
  std::string source;

  // Throws PolicyError naming the first entry that is wrong: a path that is not absolute
  // and clean (no ".", "..", "//" or trailing "/"), a glob outside tool_write, a variable
  // name outside [A-Z_][A-Z0-9_]* or one the policy sets itself, a port outside
  // 0..65535, an empty domain.
  void validate() const;
  // Creates every path of deny that does not exist yet (0700 directories, with parents):
  // a sandbox mounts over each, and cannot create one inside a tree it made read-only. For
  // the harness's view, every tool_write entry without a glob too.
  void mount_points(ViewFor who = ViewFor::commands) const;
  // Every variable a held session gets: vars, the egress variables of egress (none without
  // one) and kEnvSandbox=1.
  std::map<std::string, std::string> environment() const;
};

class PolicyError : public std::runtime_error {
 public:
  // what(): "<source>: <entry>: <what was wrong>" (no "<source>: " when source is "").
  PolicyError(const std::string &source, const std::string &entry, const std::string &what);
  const std::string &entry() const noexcept { return entry_; }

 private:
  std::string entry_;
};

// Reads a policy file (TOML; docs/agent-policy.md) and validates it. Throws PolicyError
// naming file, line where known, key and what was wrong.
Policy load_policy(const std::filesystem::path &file);
Policy parse_policy(std::string_view toml, const std::string &source);

}  // namespace sandbox_host::policy
