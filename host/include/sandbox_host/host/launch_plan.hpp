// From a LaunchRequest to what a launch runs: the whole Spec decided here (the plugin's name,
// its network, read paths, the egress proxy for network proxied, a policy's view, the
// config's limits), its env, the backend chosen, private directories made. `run` plans its
// own launches here and the launch service plans those it is asked for, so the two never
// differ in what a plugin gets, and nothing after the plan decides any of it again.
#pragma once

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/launch_client/launch_request.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sandbox_host {

// A directory made for one launch (0700), removed with everything in it afterwards.
class PrivateDir {
 public:
  PrivateDir();  // under $TMPDIR when absolute, else /tmp
  ~PrivateDir();
  PrivateDir(const PrivateDir &) = delete;
  PrivateDir &operator=(const PrivateDir &) = delete;
  const std::filesystem::path &path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

struct LaunchPlan {
  Spec spec;
  std::string mode;
  std::vector<std::string> plugin_env;  // NAME=VALUE, for Host::command()
  // Set when the request named none; hold them until the plugin has exited.
  std::unique_ptr<PrivateDir> private_socket_dir, private_tmp_dir;
};

// Throws, naming what was wrong, for a request the config or the host refuses.
// policy_view: the launch is held to an agent policy (run --policy), whose view
// (policy::command_view) this is; where neither the caller nor the config names the
// plugin's network, its commands then go through the egress proxy, if the config has one.
LaunchPlan plan_launch(Host &host, LaunchRequest request,
                       std::optional<std::vector<PathRule>> policy_view = std::nullopt);

// What the launch service asks of a request before it plans it: no weaker confinement than
// its config gives the plugin. A named backend must stand no later in backends.priority
// than the one the config gives (off only where the operator wrote sandbox = "off" for the
// plugin), and a named network must be as closed as the plugin's network in the config,
// where the config names one (none, then proxied, then outbound). Throws naming both.
void require_configured_confinement(Host &host, const LaunchRequest &request);

}  // namespace sandbox_host
