// BaseEnv: the whole environment a plugin starts with, sandboxed or not
// (docs/design.md#baseenv).
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

// PATH, LANG, and HOME and TMPDIR at spec.tmp_dir. Nothing of the host's environment.
std::vector<std::string> base_env(const Spec &spec);

// The names base_env() sets, which a caller's variables may not replace.
inline constexpr std::string_view kBaseEnvNames[] = {"PATH", "LANG", "HOME", "TMPDIR"};

}  // namespace sandbox_host
