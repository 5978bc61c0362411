#include <sandbox_host/host/base_env.hpp>

namespace sandbox_host {

std::vector<std::string> base_env(const Spec &spec) {
  return {
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "LANG=C.UTF-8",
      "HOME=" + spec.tmp_dir,
      "TMPDIR=" + spec.tmp_dir,
  };
}

}  // namespace sandbox_host
