// CLAWPATROL_SANDBOX_SPEC: what the host tells its re-exec'd child, as JSON.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>

namespace sandbox_host {

struct Stage1Payload {
  std::string backend;      // the backend's name
  std::string module_file;  // the backend module the child loads
  Spec spec;
};

std::string encode_stage1_payload(const Stage1Payload &payload);
// Throws std::invalid_argument naming the missing or mistyped field.
Stage1Payload decode_stage1_payload(std::string_view json);

}  // namespace sandbox_host
