// The [launcher] table: each bad key refused by its name, the defaults, and the socket's
// path held to what a unix socket address holds, written or defaulted under
// broker.state_dir, when the file is read rather than when serve binds it.
#include "config_error.hpp"

#include <sandbox_host/host/config.hpp>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace sandbox_host {
namespace {

TEST(LauncherConfig, BadKeysAreRefusedByName) {
  for (const auto &[text, reason] : std::vector<std::pair<std::string, std::string>>{
           {"[launcher]\nsocket = \"relative\"\n", "launcher.socket"},
           {"[launcher]\ndepth = 99\n", "launcher.depth"},
           {"[launcher]\nmax_launches = 0\n", "launcher.max_launches"},
           {"[launcher]\nport = 1\n", "launcher.port"},
           {"[plugins.p]\nenv = [\"OK\", \"CLAWPATROL_X=1\"]\n", "plugins.p.env[1]"},
           {"[plugins.p]\nenv = \"FOO\"\n", "plugins.p.env"},
           {"[plugins.p]\nenv = [\"HOME=/x\"]\n",
            "plugins.p.env[0]: env HOME: BaseEnv sets this variable"},
           {"[plugins.p]\nhandshake = \"COOKIE=1\"\n", "plugins.p.handshake"}}) {
    test::TempFile file(text, "config.toml");
    try {
      load_config(file.path());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError &e) {
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  }
  test::TempFile defaults("[launcher]\n[broker]\nstate_dir = \"/srv/state\"\n", "config.toml");
  const Config config = load_config(defaults.path());
  ASSERT_TRUE(config.launcher);
  EXPECT_EQ(config.launcher->socket, "/srv/state/launcher/launch.sock");
  EXPECT_EQ(config.launcher->depth, 1u);
}

TEST(LauncherConfig, TheSocketFitsAUnixSocketAddress) {
  const std::string long_path = "/" + std::string(107, 's');
  EXPECT_EQ(error_of("[launcher]\nsocket = \"" + long_path + "\"\n"),
            ":2: launcher.socket: \"" + long_path +
                "\" is longer than a unix socket address holds (107 bytes)");
  test::TempFile fits("[launcher]\nsocket = \"/" + std::string(106, 's') + "\"\n", "config.toml");
  EXPECT_EQ(load_config(fits.path()).launcher->socket.string().size(), 107u);
  // The default socket follows broker.state_dir, which may be too long for it.
  const std::string state_dir = "/" + std::string(90, 'd');
  EXPECT_EQ(error_of("[broker]\nstate_dir = \"" + state_dir + "\"\n\n[launcher]\ndepth = 1\n"),
            ":4: launcher.socket: the default \"" + state_dir +
                "/launcher/launch.sock\" (under broker.state_dir) is longer than a unix socket "
                "address holds (107 bytes); set launcher.socket");
  EXPECT_EQ(
      error_of("[broker]\nstate_dir = \"" + state_dir + "\"\n\n[launcher]\nsocket = \"/l.sock\"\n"),
      "");
}

}  // namespace
}  // namespace sandbox_host
