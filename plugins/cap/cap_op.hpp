// What cap-slot and scope share as operations: the request fields neither takes are
// refused, and every failure becomes a refusal that starts with the op's name.
#pragma once

#include "cap_driver.hpp"
#include "memory_cap.hpp"

#include <sandbox_host/command_op.hpp>
#include <sandbox_host/module.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sandbox_host::cap {

// Refuses a request that sets a field the op does not read: a requester that sends one
// expects it to mean something, and nothing it sends may be silently dropped.
inline void refuse_unused_fields(std::string_view op, const Request &request, bool takes_unit) {
  const auto refuse = [&](std::string_view field) {
    throw refusal(op, "takes no " + std::string(field) + "; it takes slice, max and swap" +
                          (takes_unit ? " and unit" : ""));
  };
  if (!takes_unit && !request.unit.empty()) refuse("unit");
  if (!request.args.empty()) refuse("args");
  if (!request.wait.empty()) refuse("wait");
  if (!request.resource.empty()) refuse("resource");
  if (!request.input.empty()) refuse("input");
  if (request.stream) refuse("stream");
}

// body(), with its std::exception turned into refusal(op, what).
template <class Body>
auto refusing(std::string_view op, Body &&body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception &e) {
    throw refusal(op, e.what());
  }
}

// The request's cap, checked by memory_cap and by the driver's naming of slices.
inline MemoryCap requested_cap(std::string_view op, const Request &request,
                               const CapDriver &driver) {
  return refusing(op, [&] {
    MemoryCap cap = memory_cap(request.slice, request.max, request.swap);
    driver.check_slice(cap.slice);
    return cap;
  });
}

// What `sandbox-host probe` shows for the op: the driver it chose when it loaded, and why.
inline std::vector<std::pair<std::string, std::string>> driver_report(const ChosenDriver &chosen) {
  return {{"driver", chosen.driver->describe()}, {"chosen", chosen.why}};
}

}  // namespace sandbox_host::cap
