#include "service_variables.hpp"

#include <cstdlib>

namespace sandbox_host::service_variables {

std::optional<std::string> take(const char *name) {
  const char *value = ::getenv(name);
  std::optional<std::string> taken;
  if (value != nullptr) taken = value;
  ::unsetenv(name);
  return taken;
}

}  // namespace sandbox_host::service_variables
