#include "command_op_fixture.hpp"

namespace ops_test {
namespace {

using LabOp = CommandOpTest;

Call lab_ask(std::vector<std::string> args, std::string resource) {
  Call call = ask(std::move(args));
  call.request.resource = std::move(resource);
  return call;
}

// The subcommand, then "--", then the requester's other arguments and the lease.
TEST_F(LabOp, AppendsTheLeaseAsTheLastArgument) {
  Op lab("lab", with_command({{"args", {"lab"}}}));
  EXPECT_EQ(ran(lab.handle(lab_ask({"create", "fast"}, "lab-3.eu"))).args,
            (std::vector<std::string>{"lab", "create", "--", "fast", "lab-3.eu"}));
  EXPECT_EQ(ran(lab.handle(lab_ask({"delete"}, "lab-3.eu"))).args,
            (std::vector<std::string>{"lab", "delete", "--", "lab-3.eu"}));
}

TEST_F(LabOp, RefusesAnotherSubcommand) {
  Op lab("lab", with_command());
  EXPECT_EQ(refusal_of(lab.handle(lab_ask({"export"}, "lab-3"))),
            "lab: \"export\" is not an allowed subcommand; allowed: create, delete");
}

TEST_F(LabOp, RefusesARequestWithoutALease) {
  Op lab("lab", with_command());
  EXPECT_EQ(refusal_of(lab.handle(lab_ask({"create"}, ""))),
            "lab: a resource is required: the lab lease's name");
}

TEST_F(LabOp, RefusesAMalformedLease) {
  Op lab("lab", with_command());
  for (const std::string &resource :
       std::vector<std::string>{"-lab", "Lab", "lab_3", "lab 3", "../x", std::string(64, 'a')}) {
    EXPECT_EQ(refusal_of(lab.handle(lab_ask({"create"}, resource))),
              "lab: resource \"" + resource + "\" does not match ^[a-z0-9][a-z0-9.-]{0,62}$");
  }
  EXPECT_EQ(ran(lab.handle(lab_ask({"create"}, std::string(63, 'a')))).args.back(),
            std::string(63, 'a'));
}

}  // namespace
}  // namespace ops_test
