// What the container tests read of `sandbox-host probe --json`, with Poco: another JSON
// implementation than the one that wrote it.
#pragma once

#include <optional>
#include <string>

namespace sandbox_host::test::container {

struct ProbeView {
  std::string chosen;  // empty when no backend works
  bool namespaces_available = false;
  std::string namespaces_reason;  // why not, when it is not
  std::string namespaces_hint;    // what would make it work
  std::size_t chosen_gaps = 0;    // the chosen backend's gaps, as the top-level array has them
};

// nullopt when `json` is not probe's object.
std::optional<ProbeView> read_probe(const std::string &json);

}  // namespace sandbox_host::test::container
