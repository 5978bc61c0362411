#include "fixtures.hpp"

#include <sandbox_host/host/base_env.hpp>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

TEST(BaseEnv, IsTheWholeEnvironmentAndTakesNothingFromTheHost) {
  test::ScopedEnv secret("CLAWPATROL_GATEWAY_TOKEN", "ghp_secret");
  test::ScopedEnv cloud("AWS_SECRET_ACCESS_KEY", "also-secret");
  test::ScopedEnv path("PATH", "/opt/host/bin");
  Spec spec;
  spec.tmp_dir = "/run/plugin/tmp";
  EXPECT_EQ(base_env(spec),
            (std::vector<std::string>{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
                                      "HOME=/run/plugin/tmp", "TMPDIR=/run/plugin/tmp"}));
}

}  // namespace
}  // namespace sandbox_host
