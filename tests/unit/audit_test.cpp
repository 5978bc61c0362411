#include "fixtures.hpp"

#include <sandbox_host/host/audit.hpp>
#include <sandbox_host/host/host.hpp>
#include <sandbox_host/host/spec_check.hpp>
#include <sandbox_host/sandboxtest.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

namespace sandbox_host {
namespace {

const AuditRecord kRecord{"spec", "git", "spec-BinaryPath", "launch \"bin/git\"\nsecond line",
                          "use an absolute path"};

TEST(Audit, TextIsOneLineForPeople) {
  EXPECT_EQ(format_text(kRecord),
            "sandbox-host: refused: spec plugin=git rule=spec-BinaryPath: launch \"bin/git\" "
            "second line (hint: use an absolute path)\n");
}

TEST(Audit, JsonIsOneObjectPerLineForMachines) {
  std::string line = format_json(kRecord);
  ASSERT_EQ(line.find('\n'), line.size() - 1);
  auto object = Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>();
  EXPECT_EQ(object->getValue<std::string>("component"), "spec");
  EXPECT_EQ(object->getValue<std::string>("plugin"), "git");
  EXPECT_EQ(object->getValue<std::string>("rule"), "spec-BinaryPath");
  EXPECT_EQ(object->getValue<std::string>("attempted"), "launch \"bin/git\"\nsecond line");
  EXPECT_EQ(object->getValue<std::string>("hint"), "use an absolute path");
  EXPECT_GT(object->getValue<long long>("time_ms"), 0);
}

TEST(Audit, ARefusedSpecIsRecorded) {
  test::AuditCapture audit;
  Host host(audit.apply(test::test_config({"off"}, {})));
  sandboxtest::TempSpec t("git", REPORT_PLUGIN);
  t.spec.binary_path = "bin/git";
  EXPECT_THROW(host.command(t.spec, "off"), SpecError);
  auto records = audit.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("component"), "spec");
  EXPECT_EQ(records[0].at("plugin"), "git");
  EXPECT_EQ(records[0].at("rule"), "spec-BinaryPath");
  EXPECT_EQ(records[0].at("attempted"),
            "plugin \"git\": spec BinaryPath: \"bin/git\" is not an absolute path");
}

}  // namespace
}  // namespace sandbox_host
