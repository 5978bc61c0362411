// The systemd driver against systemd's D-Bus API as python3-dbusmock serves it
// (fixtures/systemd_manager.py) on a private bus of the test's own dbus-daemon: the
// modules reach it through the config's `bus`, which also chooses the driver, and the test
// asserts the exact calls the mock received.
#include "cap_harness.hpp"

#include <fixtures.hpp>

#include <Poco/JSON/Array.h>
#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace cap_test {
namespace {
namespace fs = std::filesystem;
using sandbox_host::test::RunningProcess;
using sandbox_host::test::TempFile;

constexpr std::uint64_t kInfinity = UINT64_MAX;

// A dbus-daemon on a socket of its own, with the mock Manager owning org.freedesktop.systemd1.
class MockSystemd {
 public:
  MockSystemd()
      : config_(
            "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
            " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
            "<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>\n"
            "<auth>EXTERNAL</auth><policy context=\"default\"><allow send_destination=\"*\"/>"
            "<allow receive_sender=\"*\"/><allow own=\"*\"/></policy></busconfig>\n",
            "bus.conf") {
    daemon_ = std::make_unique<RunningProcess>(
        std::vector<std::string>{"/usr/bin/dbus-daemon", "--config-file=" + config_.path().string(),
                                 "--nofork", "--print-address"});
    const auto address = daemon_->read_line(std::chrono::seconds(10));
    if (!address) throw std::runtime_error("dbus-daemon printed no address");
    address_ = *address;
    const fs::path ready = config_.dir() / "ready";
    const std::string parameters =
        "{\"record\": \"" + calls_file().string() + "\", \"ready\": \"" + ready.string() + "\"}";
    mock_ = std::make_unique<RunningProcess>(
        std::vector<std::string>{"/usr/bin/python3", "-m", "dbusmock", "--session", "--template",
                                 SYSTEMD_MANAGER_MOCK, "-p", parameters},
        sandbox_host::test::with_env(
            {"DBUS_SESSION_BUS_ADDRESS=" + address_, "PATH=/usr/bin:/bin"}));
    if (!sandbox_host::test::eventually([&] { return fs::exists(ready); },
                                        std::chrono::seconds(20))) {
      throw std::runtime_error("the mock systemd did not start: " +
                               mock_->wait(std::chrono::milliseconds(100)).err);
    }
  }

  const std::string &address() const noexcept { return address_; }

  // The calls the mock got, in order.
  std::vector<Poco::JSON::Object::Ptr> calls() const {
    std::vector<Poco::JSON::Object::Ptr> calls;
    std::ifstream in(calls_file());
    for (std::string line; std::getline(in, line);) {
      calls.push_back(Poco::JSON::Parser().parse(line).extract<Poco::JSON::Object::Ptr>());
    }
    return calls;
  }

 private:
  fs::path calls_file() const { return config_.dir() / "calls.jsonl"; }

  TempFile config_;
  std::string address_;
  std::unique_ptr<RunningProcess> daemon_, mock_;
};

std::uint64_t number(const Poco::JSON::Object::Ptr &object, const std::string &key) {
  return object->getValue<Poco::UInt64>(key);
}

class SystemdDriver : public testing::Test {
 protected:
  sandbox_host::ModuleSettings settings() const {
    return {{"bus", {systemd_.address()}}, {"parent", {"sandbox.slice"}}};
  }
  MockSystemd systemd_;
};

TEST_F(SystemdDriver, ScopeStartsATransientScopeWithTheRequesterAndTheCap) {
  ops_test::Op op("scope", settings());
  Requester requester;
  const ops_test::Outcome outcome =
      ask(op, cap_request("scope", "sandbox-slot1.slice", "32M", "0", "run-1.scope"), requester);
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  const auto calls = systemd_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->getValue<std::string>("method"), "StartTransientUnit");
  EXPECT_EQ(calls[0]->getValue<std::string>("name"), "run-1.scope");
  EXPECT_EQ(calls[0]->getValue<std::string>("mode"), "fail");
  EXPECT_EQ(calls[0]->getValue<int>("aux"), 0);
  const auto properties = calls[0]->getObject("properties");
  EXPECT_EQ(properties->size(), 5u);
  EXPECT_EQ(properties->getValue<std::string>("Slice"), "sandbox-slot1.slice");
  EXPECT_TRUE(properties->getValue<bool>("Delegate"));
  const auto pids = properties->getArray("PIDs");
  ASSERT_EQ(pids->size(), 1u);
  EXPECT_EQ(pids->getElement<int>(0), requester.pid());
  EXPECT_EQ(number(properties, "MemoryMax"), 32u << 20);
  EXPECT_EQ(number(properties, "MemorySwapMax"), 0u);

  // systemd refuses a unit that exists; the refusal says so.
  Requester second;
  const ops_test::Outcome again =
      ask(op, cap_request("scope", "sandbox-slot1.slice", "32M", "0", "run-1.scope"), second);
  EXPECT_EQ(again.status, SH_ERROR);
  EXPECT_EQ(again.error,
            "scope: systemd: StartTransientUnit run-1.scope: Unit run-1.scope was already loaded "
            "or has a fragment file. (org.freedesktop.systemd1.UnitExists)");
}

TEST_F(SystemdDriver, CapSlotSetsTheSlicesMemoryAndStartsASliceNothingMadeYet) {
  ops_test::Op op("cap-slot", settings());
  Requester requester;
  ops_test::Outcome outcome =
      ask(op, cap_request("cap-slot", "sandbox-slot1.slice", "1G", "infinity"), requester);
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  auto calls = systemd_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0]->getValue<std::string>("method"), "SetUnitProperties");
  EXPECT_EQ(calls[0]->getValue<std::string>("name"), "sandbox-slot1.slice");
  EXPECT_TRUE(calls[0]->getValue<bool>("runtime"));
  for (const auto &call : calls) {
    const auto properties = call->getObject("properties");
    EXPECT_EQ(properties->size(), 2u);
    EXPECT_EQ(number(properties, "MemoryMax"), 1u << 30);
    EXPECT_EQ(number(properties, "MemorySwapMax"), kInfinity);
  }
  // The mock knows no such slice yet (NoSuchUnit), so the driver starts it transient.
  EXPECT_EQ(calls[1]->getValue<std::string>("method"), "StartTransientUnit");
  EXPECT_EQ(calls[1]->getValue<std::string>("name"), "sandbox-slot1.slice");

  outcome = ask(op, cap_request("cap-slot", "sandbox-slot1.slice", "2G", "0"), requester);
  ASSERT_EQ(outcome.status, SH_OK) << outcome.error;
  calls = systemd_.calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[2]->getValue<std::string>("method"), "SetUnitProperties");
  EXPECT_EQ(number(calls[2]->getObject("properties"), "MemoryMax"), 2u << 30);
  EXPECT_EQ(number(calls[2]->getObject("properties"), "MemorySwapMax"), 0u);
}

TEST_F(SystemdDriver, RefusesASliceOutsideTheParentBeforeAnyCall) {
  ops_test::Op scope("scope", settings());
  ops_test::Op slot("cap-slot", settings());
  Requester requester;
  EXPECT_EQ(
      ask(scope, cap_request("scope", "system.slice", "32M", "0", "run-1.scope"), requester).error,
      "scope: slice \"system.slice\" is not under the parent slice sandbox.slice: its name "
      "must start with \"sandbox-\"");
  EXPECT_EQ(ask(slot, cap_request("cap-slot", "sandboxed.slice", "32M", "0"), requester).error,
            "cap-slot: slice \"sandboxed.slice\" is not under the parent slice sandbox.slice: its "
            "name must start with \"sandbox-\"");
  EXPECT_TRUE(systemd_.calls().empty());
}

TEST(SystemdDriverWithoutBus, SaysWhichBusItCouldNotReach) {
  ops_test::Op op("scope",
                  {{"bus", {"unix:path=/nonexistent/bus"}}, {"parent", {"sandbox.slice"}}});
  Requester requester;
  const ops_test::Outcome outcome =
      ask(op, cap_request("scope", "sandbox-slot1.slice", "32M", "0", "run-1.scope"), requester);
  EXPECT_EQ(outcome.status, SH_ERROR);
  EXPECT_EQ(outcome.error,
            "scope: systemd: cannot connect to bus unix:path=/nonexistent/bus: No such file or "
            "directory");
}

}  // namespace
}  // namespace cap_test
