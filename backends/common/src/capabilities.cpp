#include <sandbox_host/backends/hardening.hpp>
#include <sandbox_host/backends/setup_error.hpp>

#include <cap-ng.h>

namespace sandbox_host::backends {

void drop_bounding_set() {
  capng_get_caps_process();
  capng_clear(CAPNG_SELECT_BOUNDS);
  if (capng_apply(CAPNG_SELECT_BOUNDS) != 0) {
    throw SetupError("capabilities", "capng_apply could not empty the bounding set");
  }
}

namespace {

void drop_held_capabilities() {
  capng_clear(CAPNG_SELECT_ALL);
  if (capng_apply(static_cast<capng_select_t>(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT)) != 0) {
    throw SetupError("capabilities", "capng_apply could not drop every capability");
  }
  // Read back from the kernel, not from libcap-ng's own state.
  capng_get_caps_process();
  if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE) {
    throw SetupError("capabilities", "a capability is still held after dropping them all");
  }
}

}  // namespace

void drop_all_capabilities() {
  // libcap-ng drops the bounding set one capability per call, even an empty one.
  capng_get_caps_process();
  if (capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE) drop_bounding_set();
  drop_held_capabilities();
  if (capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE) {
    throw SetupError("capabilities", "the bounding set is not empty after dropping it");
  }
}

void drop_capabilities() {
  capng_get_caps_process();
  if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP) &&
      capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE) {
    drop_bounding_set();
  }
  drop_held_capabilities();
}

}  // namespace sandbox_host::backends
