// A policy as the view a backend holds a command to (Spec::view): commands read what the
// file tools read, and write Write apart from Deny, Harness and ToolWrite.
#pragma once

#include <sandbox_host/host/policy/agent_policy.hpp>
#include <sandbox_host/spec.hpp>

#include <vector>

namespace sandbox_host::policy {

// Rules on resolved, existing paths, sorted by path, one per path, the longest path
// winning: home and runtime none; read and egress read; write write; harness and every
// existing match of tool_write no more than read (and nothing below them writable); deny
// none (and nothing below it re-allowed). An entry that does not exist is left out, apart
// from deny, which must exist (mount_points() makes it): std::runtime_error names it.
// For the harness's view, every existing match of tool_write is writable instead. Each
// existing path of hidden is none, like a deny entry.
std::vector<PathRule> command_view(const Policy &policy, ViewFor who = ViewFor::commands,
                                   const std::vector<std::string> &hidden = {});

}  // namespace sandbox_host::policy
