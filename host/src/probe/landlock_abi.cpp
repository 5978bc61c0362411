#include <sandbox_host/host/probe.hpp>

#include <algorithm>

namespace sandbox_host {

int reported_landlock_abi(const std::vector<BackendStatus> &statuses) noexcept {
  int abi = 0;
  for (const BackendStatus &status : statuses) abi = std::max(abi, status.landlock_abi);
  return abi;
}

}  // namespace sandbox_host
