#include "backends_config.hpp"

#include "module_name.hpp"
#include "schema_key.hpp"

#include <sandbox_host/host/env_names.hpp>

namespace sandbox_host {
namespace {

void read_enabled(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                  const ConfigKeyDoc &, Config &config) {
  config.backends_enabled = read_module_names(r, node, dotted);
}

void read_priority(const ConfigReader &r, const toml::node &node, const std::string &dotted,
                   const ConfigKeyDoc &, Config &config) {
  config.backend_priority = read_module_names(r, node, dotted);
  for (const auto &backend : config.backend_priority) {
    if (backend == kModeOff) {
      r.fail(node.source(), dotted,
             "\"off\" is never chosen by priority; write sandbox = \"off\" in a "
             "[plugins.<name>] table to run that plugin unsandboxed");
    }
  }
}

constexpr SchemaKey<Config> kBackendsKeys[] = {
    {{"enabled", "array of backend names", R"(["namespaces", "landlock", "seatbelt", "off"])",
      std::nullopt, "the backend modules to load, each from `backend_<name>.so`"},
     &read_enabled},
    {{"priority", "array of backend names", R"(["namespaces", "landlock", "seatbelt"])",
      std::nullopt, "the order the probe tries them in; unwritten, this order of the enabled ones"},
     &read_priority},
};

}  // namespace

void read_backends(const ConfigReader &r, const toml::table &t, Config &config) {
  read_keys(r, t, "backends", kBackendsKeys, config);
}

ConfigTableDoc backends_schema() {
  return {"backends", key_docs(kBackendsKeys)};
}

}  // namespace sandbox_host
