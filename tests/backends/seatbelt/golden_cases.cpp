#include "golden_cases.hpp"

namespace sandbox_host::seatbelt::test {
namespace {

Spec ordinary_spec(Network network, std::vector<std::string> read_paths) {
  Spec spec;
  spec.plugin_name = "echo";
  spec.binary_path = "/opt/plugins/echo-plugin";
  spec.socket_dir = "/private/var/folders/zz/T/sandbox-host-4f2a";
  spec.tmp_dir = "/private/var/folders/zz/T/sandbox-host-4f2a/tmp";
  spec.network = network;
  spec.read_paths = std::move(read_paths);
  spec.args = {"serve", "--verbose"};
  return spec;
}

Spec awkward_spec(Network network) {
  Spec spec;
  spec.plugin_name = "awkward";
  spec.binary_path = "/Users/zoë/Plugins/my \"plugin\" (v2)/bin\\run;me";
  spec.socket_dir = "/private/tmp/sock dir;(x)\n\")(allow default)";
  spec.tmp_dir = "/private/tmp/sock dir;(x)\n\")(allow default)/tmp";
  spec.network = network;
  spec.read_paths = {
      "/Users/zoë/データ/a=b",
      "/opt/x\") (allow file-write* (subpath \"/\")) (literal \"",
      "/srv/back\\slash\\\"; comment\n(deny default)",
  };
  spec.args = {"-p", "(version 1)(allow default)", "--", "-D", "X=y"};
  return spec;
}

// An agent's command under a policy: the home hidden, a directory and a file in it read, a
// project written with a deny and a read-only tree inside; given longest path first, so
// that the profile's order is its own.
Spec agent_view_spec(Network network) {
  Spec spec = ordinary_spec(network, {});
  spec.plugin_name = "agent";
  spec.binary_path = "/bin/sh";
  spec.args = {"-c", "make test"};
  spec.view = {
      {"/Users/alice/src/app/.state/scan", PathAccess::none},
      {"/Users/alice/src/app/vendor", PathAccess::read},
      {"/Users/alice/src/app", PathAccess::write},
      {"/Users/alice/Documents", PathAccess::read},
      {"/Users/alice/.zshrc", PathAccess::read},
      {"/Users/alice", PathAccess::none},
  };
  return spec;
}

Spec awkward_view_spec(Network network) {
  Spec spec = awkward_spec(network);
  spec.view = {
      {"/Users/zoë", PathAccess::none},
      {"/Users/zoë/src \"x\" (allow default)", PathAccess::write},
      {"/Users/zoë/src \"x\" (allow default)/.git\n(deny default)", PathAccess::read},
  };
  return spec;
}

}  // namespace

std::vector<GoldenCase> golden_cases() {
  return {
      {"none-no-read-paths", ordinary_spec(Network::none, {})},
      {"outbound-one-read-path", ordinary_spec(Network::outbound, {"/Users/alice/plugin-data"})},
      {"none-three-read-paths",
       ordinary_spec(Network::none, {"/Users/alice/plugin-data", "/opt/homebrew/share/certs",
                                     "/Library/Application Support/Echo"})},
      {"none-awkward-paths", awkward_spec(Network::none)},
      {"outbound-awkward-paths", awkward_spec(Network::outbound)},
      {"none-agent-view", agent_view_spec(Network::none)},
      {"outbound-agent-view-awkward-paths", awkward_view_spec(Network::outbound)},
  };
}

}  // namespace sandbox_host::seatbelt::test
