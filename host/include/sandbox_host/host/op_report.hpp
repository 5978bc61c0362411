// What a broker-op module says it found on this host (its report, module ABI 1.8): the facts
// `sandbox-host probe` shows for each enabled op, so that the host names no op's own terms.
#pragma once

#include <sandbox_host/host/module.hpp>

#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {

struct OpReport {
  std::vector<std::pair<std::string, std::string>> facts;  // key, value, in the op's order
  std::string error;  // the op's message when its report failed; facts are then empty
};

// An op built before ABI 1.8, or one that offers no report, has no facts and no error.
OpReport op_report(const LoadedModule &op);

}  // namespace sandbox_host
