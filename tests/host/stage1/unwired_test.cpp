// A binary whose main() never called stage1(): launching from it fails fast and says why,
// instead of hanging a plugin's handshake.
#include "fixtures.hpp"

#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/stage1.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

void expect_unwired_error(const std::function<void()> &call, const std::string &what) {
  try {
    call();
    FAIL() << what << " worked without stage1()";
  } catch (const std::logic_error &e) {
    EXPECT_EQ(std::string(e.what()).rfind(what + ": sandbox_host::stage1() was never called", 0),
              0u)
        << e.what();
  }
}

TEST(Unwired, CommandAndProbeFailFast) {
  ASSERT_FALSE(stage1_wired());
  Host host(test::test_config({"off"}, {}));
  sandboxtest::TempSpec t("report", REPORT_PLUGIN);
  expect_unwired_error([&] { host.command(t.spec, "off"); }, "command");
  expect_unwired_error([&] { host.probe(); }, "probe");
}

}  // namespace
}  // namespace sandbox_host
