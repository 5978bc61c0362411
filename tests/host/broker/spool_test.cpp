// The spool transport against the real broker, as root and as nobody: answers, each
// refusal the issue lists, and what the refusals leave behind (nothing).
#include "served_broker.hpp"

#include <sandbox_host/host/broker/client.hpp>

#include <Poco/JSON/Object.h>
#include <Poco/JSON/Parser.h>
#include <gtest/gtest.h>

#include <fstream>

namespace sandbox_host::test {
namespace {

struct Case {
  unsigned uid;
  std::string identity;
};

void PrintTo(const Case &c, std::ostream *out) {
  *out << "uid " << c.uid << ", identity " << c.identity;
}

std::string name_of(const testing::TestParamInfo<Case> &info) {
  return std::string(info.param.uid == 0 ? "Root" : "Nobody") +
         (info.param.identity == "lock" ? "Lock" : "Scan");
}

class Spool : public testing::TestWithParam<Case> {
 protected:
  Spool() : broker_(setup_for(GetParam().uid, GetParam().identity)) {}

  // The error of the last reply line spool_client printed.
  std::string refusal(const ProcessResult &result) {
    EXPECT_EQ(result.code, 0) << result.err;
    const auto all = lines(result.out);
    if (all.empty() || all.back().find("\"end\":true") == std::string::npos) {
      ADD_FAILURE() << "no last frame in: " << result.out;
      return {};
    }
    auto last = Poco::JSON::Parser().parse(all.back()).extract<Poco::JSON::Object::Ptr>();
    if (!last->has("error")) return "(no error) " + all.back();
    return last->getValue<std::string>("error");
  }

  void expect_spool_empty() {
    std::vector<std::string> left;
    for (const auto &entry : std::filesystem::directory_iterator(broker_.spool())) {
      if (entry.path().filename() != ".broker") left.push_back(entry.path().filename());
    }
    EXPECT_TRUE(left.empty()) << "left in the spool: " << testing::PrintToString(left);
  }

  ServedBroker broker_;
};

TEST_P(Spool, AnswersPingAsTheAskingProcess) {
  auto result = broker_.ask({"ping"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "pong");
  auto who = broker_.ask({"whoami"});
  ASSERT_EQ(who.code, 0) << who.err;
  EXPECT_EQ(field(who.out, "uid"), std::to_string(GetParam().uid));
  EXPECT_EQ(field(who.out, "sandboxed"), "no");
  EXPECT_EQ(field(who.out, "pidfd"), "yes");
  EXPECT_EQ(field(who.out, "cwd"), std::filesystem::current_path().string());
  expect_spool_empty();
}

TEST_P(Spool, HandMadeGoodRequestIsAnswered) {
  auto result = broker_.spool_client("good");
  EXPECT_NE(result.out.find("\"out\":\"pong\""), std::string::npos) << result.out;
  expect_spool_empty();
}

TEST_P(Spool, RefusesARequestNobodyHolds) {
  const auto error = refusal(broker_.spool_client("closed"));
  if (GetParam().identity == "lock") {
    EXPECT_EQ(error,
              "no process holds the request's lock (the asker closed it or exited before "
              "the broker took it)");
  } else {
    EXPECT_EQ(error, "no process holds the request open");
  }
  expect_spool_empty();
}

TEST_P(Spool, RefusesARequestTwoProcessesHoldAfterAFork) {
  const auto error = refusal(broker_.spool_client("forked"));
  EXPECT_NE(error.find("the request is held open by 2 processes; "), std::string::npos) << error;
  EXPECT_NE(error.find("it must be held by the one process that asks"), std::string::npos) << error;
  // The holders' host pids go to the operator's audit, never to the requester.
  EXPECT_EQ(error.find_first_of("0123456789", error.find("processes;")), std::string::npos)
      << error;
  const auto records = broker_.audit(1);
  ASSERT_FALSE(records.empty());
  EXPECT_NE(records.back().at("attempted").find("(pids "), std::string::npos);
  expect_spool_empty();
}

TEST_P(Spool, RefusesASymlink) {
  EXPECT_NE(refusal(broker_.spool_client("symlink")).find("is a symbolic link"), std::string::npos);
  expect_spool_empty();
}

TEST_P(Spool, RefusesAHardLink) {
  EXPECT_EQ(refusal(broker_.spool_client("hardlink")),
            "the request has 2 hard links; a request is a file of its own (one link)");
}

TEST_P(Spool, RefusesAFifo) {
  EXPECT_EQ(refusal(broker_.spool_client("fifo")), "the request is a FIFO, not a regular file");
  expect_spool_empty();
}

TEST_P(Spool, RefusesAnOversizeRequest) {
  const std::string big = R"({"op":"ping","args":[")" + std::string(200 * 1024, 'a') + R"("]})";
  const auto file = broker_.root() / "big.json";
  std::ofstream(file) << big;
  EXPECT_EQ(refusal(broker_.spool_client("good", "@" + file.string())),
            "request of " + std::to_string(big.size()) +
                " bytes, more than the broker's max_request_bytes 131072");
}

TEST_P(Spool, RefusesBadJsonAndKeepsServing) {
  EXPECT_NE(refusal(broker_.spool_client("good", "{\"op\": ")).find("request is not valid JSON"),
            std::string::npos);
  EXPECT_EQ(refusal(broker_.spool_client("good", R"({"op":"ping","stream":"yes"})")),
            "field \"stream\" must be a boolean, not a string");
  EXPECT_EQ(refusal(broker_.spool_client("good", R"({"op":"ping","extra":1})")),
            "unknown field \"extra\"; fields: op, unit, slice, max, swap, args, wait, "
            "resource, input, stream");
  EXPECT_EQ(broker_.ask({"ping"}).out, "pong");
}

TEST_P(Spool, RefusesAnUnknownOperation) {
  auto result = broker_.ask({"teleport"});
  EXPECT_EQ(result.code, 126);
  EXPECT_EQ(result.err,
            "sandbox-host ask: refused: unknown operation \"teleport\"; operations: "
            "ping, whoami\n");
}

TEST_P(Spool, RefusalsGoToTheAudit) {
  broker_.ask({"teleport"});
  broker_.spool_client("fifo");
  const auto records = broker_.audit(2);
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[0].at("component"), "broker");
  EXPECT_EQ(records[0].at("rule"), "op-refused");
  EXPECT_NE(records[0].at("attempted").find("unknown operation \"teleport\""), std::string::npos);
  EXPECT_EQ(records[1].at("rule"), "request-refused");
  EXPECT_NE(records[1].at("attempted").find("the request is a FIFO"), std::string::npos);
}

TEST_P(Spool, ModuleErrorsAndThrowsBecomeRefusalsAndTheBrokerKeepsServing) {
  auto thrown = broker_.ask({"whoami", "--arg", "throw"});
  EXPECT_EQ(thrown.code, 126);
  EXPECT_EQ(thrown.err, "sandbox-host ask: refused: whoami: asked to throw\n");
  auto other = broker_.ask({"whoami", "--arg", "throw-other"});
  EXPECT_EQ(other.code, 126);
  EXPECT_EQ(other.err, "sandbox-host ask: refused: unknown exception\n");
  auto failed = broker_.ask({"whoami", "--arg", "fail", "--arg", "3"});
  EXPECT_EQ(failed.code, 3);
  EXPECT_EQ(failed.err, "whoami: failing as asked\n");
  EXPECT_EQ(broker_.ask({"ping"}).out, "pong");
}

INSTANTIATE_TEST_SUITE_P(Broker, Spool,
                         testing::Values(Case{0, "lock"}, Case{kNobody, "lock"},
                                         Case{kNobody, "scan"}, Case{0, "scan"}),
                         name_of);

// The asker may be the broker's own parent (a supervisor that started it): the broker, which
// holds a request once it took it, is then among the asker's descendants, and no second
// holder for that.
TEST(SpoolParent, AnswersTheBrokersOwnParent) {
  ServedBroker broker(setup_for(0));
  Request ping;
  ping.op = "ping";
  EXPECT_EQ(broker::ask(broker.spool(), ping).out, "pong");
}

// A request file of another user in the broker's spool (root can put one there).
TEST(SpoolOwner, RefusesARequestOfAnotherUser) {
  ServedBroker broker(setup_for(kNobody));
  auto result = broker.spool_client("other-uid", R"({"op":"ping"})", {"/usr/bin/env"});
  EXPECT_NE(result.out.find("the request belongs to uid 0; this broker answers uid 65534 only"),
            std::string::npos)
      << result.out << result.err;
}

}  // namespace
}  // namespace sandbox_host::test
