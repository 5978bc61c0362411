// Fuzzes `sandbox-host hook`'s decision on what Claude Code writes to its stdin: whatever the
// bytes, the answer is one of the three, the same every time, in the hook protocol's JSON,
// and never "allow" unless asked for; a file tool's call is denied or passed, nothing else.
#include "fuzz_check.hpp"

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/host/policy/file_tool_hook.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace sandbox_host::policy::fuzz {
namespace {

using sandbox_host::egress::fuzz::check;

// Paths that do not exist on the fuzzing machine: the decisions depend on the policy's rules
// and the input alone.
Policy fuzz_policy() {
  Policy policy;
  policy.home = "/nonexistent-fuzz/home";
  policy.runtime = "/nonexistent-fuzz/run";
  policy.egress = "/nonexistent-fuzz/run/egress";
  policy.read = {"/nonexistent-fuzz/home/.gitconfig"};
  policy.write = {"/nonexistent-fuzz/home/proj"};
  policy.deny = {"/nonexistent-fuzz/home/proj/.env"};
  policy.harness = "/nonexistent-fuzz/home/.claude";
  policy.tool_write = {"/nonexistent-fuzz/home/.claude/projects/*/memory"};
  return policy;
}

void check_answer(const HookAnswer &answer, const HookAnswer &again) {
  check(answer.decision == again.decision && answer.reason == again.reason,
        "the same input gets the same answer");
  check(answer.decision != HookAnswer::Decision::allow, "no allow unless asked for");
  check(answer.decision != HookAnswer::Decision::deny || !answer.reason.empty(),
        "a denial says why");
  const std::string output = hook_output(answer);
  if (answer.decision == HookAnswer::Decision::pass && answer.reason.empty()) {
    check(output.empty(), "a pass without a reason writes nothing");
    return;
  }
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(output, ec);
  check(!ec && parsed.is_object(), "the answer is a JSON object");
  const auto *specific = parsed.get_object().if_contains("hookSpecificOutput");
  check(specific != nullptr && specific->is_object(), "the answer has hookSpecificOutput");
  const auto *decision = specific->get_object().if_contains("permissionDecision");
  if (answer.decision == HookAnswer::Decision::deny) {
    check(decision != nullptr && decision->is_string() && decision->get_string() == "deny",
          "a denial says deny");
  }
}

}  // namespace
}  // namespace sandbox_host::policy::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace sandbox_host::policy;
  static const Policy policy = fuzz::fuzz_policy();
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const HookAnswer answer = decide_pre_tool_use(policy, input);
  fuzz::check_answer(answer, decide_pre_tool_use(policy, input));
  return 0;
}
