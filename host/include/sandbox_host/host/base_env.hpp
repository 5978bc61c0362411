// BaseEnv (seed 004): the whole environment a plugin starts with, sandboxed or not.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <vector>

namespace sandbox_host {

// PATH, LANG, and HOME and TMPDIR at spec.tmp_dir. Nothing of the host's environment.
std::vector<std::string> base_env(const Spec &spec);

}  // namespace sandbox_host
