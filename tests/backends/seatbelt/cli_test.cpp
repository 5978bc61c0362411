// sandbox-host probe and run, as an operator runs them on Linux with the built-in defaults,
// whose backends.enabled lists seatbelt.
#include "linux_reason.hpp"

#include "fixtures.hpp"
#include "process.hpp"

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

namespace sandbox_host::seatbelt::test {
namespace {

using sandbox_host::test::ProcessResult;
using sandbox_host::test::run_process;
using sandbox_host::test::with_env;

const std::vector<std::string> kEnv{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};

TEST(SeatbeltCli, ProbeJsonListsSeatbeltUnavailableWithTheReason) {
  const ProcessResult result = run_process({SANDBOX_HOST_EXE, "probe", "--json"}, with_env(kEnv));
  auto out = Poco::JSON::Parser().parse(result.out).extract<Poco::JSON::Object::Ptr>();
  auto backends = out->getArray("backends");
  Poco::JSON::Object::Ptr seatbelt;
  for (size_t i = 0; i < backends->size(); ++i) {
    auto backend = backends->getObject(static_cast<unsigned>(i));
    if (backend->getValue<std::string>("name") == "seatbelt") seatbelt = backend;
  }
  ASSERT_TRUE(seatbelt) << result.out << result.err;
  EXPECT_TRUE(seatbelt->getValue<bool>("loaded")) << result.out;
  EXPECT_FALSE(seatbelt->getValue<bool>("available"));
  EXPECT_EQ(seatbelt->getValue<std::string>("reason"), expected_linux_reason());
  EXPECT_NE(seatbelt->getValue<std::string>("hint").find("namespaces backend"), std::string::npos);
  EXPECT_EQ(seatbelt->getValue<std::string>("file"),
            std::string(BUILD_MODULE_DIR) + "/backend_seatbelt.so");
  if (!out->get("chosen").isEmpty()) {
    EXPECT_NE(out->getValue<std::string>("chosen"), "seatbelt");
  }
}

TEST(SeatbeltCli, AForcedSeatbeltRunFailsWith125AndTheReason) {
  std::vector<std::string> env = kEnv;
  env.push_back("CLAWPATROL_SANDBOX_BACKEND=seatbelt");
  const ProcessResult result =
      run_process({SANDBOX_HOST_EXE, "run", "--", "/bin/true"}, with_env(env));
  EXPECT_EQ(result.code, 125);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("sandbox-host run: CLAWPATROL_SANDBOX_BACKEND=seatbelt: the forced "
                            "backend does not work here, and a forced backend never falls "
                            "through: " +
                            expected_linux_reason()),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("rule=forced-backend"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace sandbox_host::seatbelt::test
