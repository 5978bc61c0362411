// What the host tells its re-exec'd child, as JSON: CLAWPATROL_SANDBOX_SPEC for a launch,
// CLAWPATROL_SANDBOX_PREPARED for a sandbox prepared before its launch, and the launch
// message such a sandbox receives later.
#pragma once

#include <sandbox_host/spec.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

struct Stage1Payload {
  std::string backend;      // the backend's name
  std::string module_file;  // the backend module the child loads
  Spec spec;
};

std::string encode_stage1_payload(const Stage1Payload &payload);
// Throws std::invalid_argument naming the missing or mistyped field.
Stage1Payload decode_stage1_payload(std::string_view json);

struct PreparedPayload {
  std::string backend;
  std::string module_file;
  Network network = Network::none;  // what the launch's Spec will have
  int control_fd = -1;              // the socket the launch arrives on
};

std::string encode_prepared_payload(const PreparedPayload &payload);
PreparedPayload decode_prepared_payload(std::string_view json);

// A launch handed to a prepared sandbox: the Spec and the plugin's whole environment.
struct LaunchMessage {
  Spec spec;  // with the plugin's environment in Spec::env
};

std::string encode_launch_message(const LaunchMessage &message);
LaunchMessage decode_launch_message(std::string_view json);

}  // namespace sandbox_host
