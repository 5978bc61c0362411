// Environment hygiene (docs/agent-policy.md#environment-hygiene): a session that
// carries the policy's variables while no sandbox holds it drops them again.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace sandbox_host::policy {

// The egress directory's variables: the CA bundle for OpenSSL, curl, git, Python and
// Node, gh's config directory and git's (GIT_CONFIG_COUNT/KEY_n/VALUE_n: GitHub over
// https, no credential helper, gpg.program the directory's gpg script). Empty for "".
std::map<std::string, std::string> egress_vars(const std::string &egress_dir);

// Whether env carries kEnvSandbox while neither kEnvRuntime nor kEnvBrokered is set:
// Claude Code applied the policy's env but no sandbox holds the session.
bool unheld(const std::function<const char *(const char *)> &getenv);

// The variables an unheld session drops, sorted, each once: the egress variables' names,
// the policy's vars and kEnvSandbox.
std::vector<std::string> unset_names(const Policy &policy);
// unset_names as one POSIX shell line ending in a newline, each name single-quoted: safe
// to eval whatever names it holds.
std::string unset_shell(const Policy &policy);
// Drops unset_names from this process's environment.
void unconfine(const Policy &policy);

}  // namespace sandbox_host::policy
