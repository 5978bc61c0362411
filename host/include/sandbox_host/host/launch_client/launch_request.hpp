// A launch as the launch service receives it (sandbox-host run --via), and as `run` plans
// its own: the Spec in the encoding stage 1 reads (spec_codec.hpp), and what the config may
// still add to it.
#pragma once

#include <sandbox_host/host/launch_client/plugin_env.hpp>
#include <sandbox_host/spec.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sandbox_host {

struct LaunchRequest {
  // Resolved by the caller, which knows its working directory and PATH: binary_path, args,
  // read_paths, and socket_dir and tmp_dir when it names them (empty: private ones, removed
  // when the plugin is done). plugin_name empty: the binary's file name.
  Spec spec;
  bool network_given = false;          // spec.network is the caller's, not the config's default
  std::optional<std::string> backend;  // run --backend
  PluginEnvRequest env;                // run --env and --handshake
  // The caller's environment, from which env's names take their values, and the config's
  // (plugins.<name>.env) too; nothing of it passes that neither names.
  std::vector<std::string> caller_env;
};

std::string encode_launch_request(const LaunchRequest &request);
// Throws std::invalid_argument naming the missing or mistyped field.
LaunchRequest decode_launch_request(std::string_view json);

}  // namespace sandbox_host
