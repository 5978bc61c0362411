// The host's watch of running launches (limits/launch_warden.hpp) through the library path a
// C++ gateway takes, Host::command and spawn(): every launch of one host process is watched
// by the same thread, and one launch over its bound is stopped while the one beside it runs
// on to its end. Under the off backend, which needs no stage 1, so the test binary itself
// can be the gateway.
#include "fixtures.hpp"

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spawn.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <string>

namespace sandbox_host {
namespace {

namespace fs = std::filesystem;

TEST(LaunchWatch, ALaunchOverItsBoundIsStoppedAndTheOneBesideItRunsOn) {
  test::AuditCapture audit;
  Config config = audit.apply(test::test_config({"off"}, {}));
  for (const char *plugin : {"filler", "neighbour"}) config.plugins[plugin].sandbox = "off";
  config.limits.watch.scratch_size = 16 << 20;
  Host host(config);

  sandboxtest::TempSpec neighbour("neighbour", "/bin/bash");
  // Within its bound, and still writing after the filler was stopped.
  neighbour.spec.args = {"-c",
                         "for i in 1 2 3 4 5 6; do head -c 1M /dev/zero >> \"$TMPDIR/log\"; "
                         "sleep 0.5; done; test $(stat -c %s \"$TMPDIR/log\") = 6291456"};
  sandboxtest::TempSpec filler("filler", "/bin/bash");
  filler.spec.args = {"-c", "head -c 6000M /dev/zero > \"$TMPDIR/fill\""};

  Child kept = spawn(host.command(neighbour.spec, "off"));
  Child stopped = spawn(host.command(filler.spec, "off"));
  EXPECT_EQ(stopped.wait().signal, SIGKILL);
  EXPECT_LT(fs::file_size(fs::path(filler.spec.tmp_dir) / "fill"), std::uint64_t{512} << 20);
  EXPECT_EQ(kept.wait().shell_status(), 0);

  std::size_t stops = 0;
  for (const auto &record : audit.records()) {
    if (record.at("rule") != "scratch-size-limit") continue;
    ++stops;
    EXPECT_EQ(record.at("plugin"), "filler");
  }
  EXPECT_EQ(stops, 1u);
}

}  // namespace
}  // namespace sandbox_host
