#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <cap-ng.h>

namespace sandbox_host::backends {

void drop_all_capabilities() {
  capng_clear(CAPNG_SELECT_ALL);
  if (capng_apply(CAPNG_SELECT_ALL) != 0) {
    throw SetupError("capabilities", "capng_apply could not drop every capability");
  }
  if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE) {
    throw SetupError("capabilities", "a capability is still held after dropping them all");
  }
}

}  // namespace sandbox_host::backends
