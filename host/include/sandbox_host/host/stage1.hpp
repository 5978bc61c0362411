// Stage 1: the first statement of main() of any binary that spawns plugins
// (docs/design.md#launch).
#pragma once

namespace sandbox_host {

// In the parent: records that the hook is wired and returns. In a child started with
// CLAWPATROL_SANDBOX_STAGE1: strips it, CLAWPATROL_SANDBOX_SPEC and
// CLAWPATROL_SANDBOX_PREPARED, has the backend set the sandbox up (for a prepared one:
// and wait for its launch) and exec the plugin, and never returns; a failure prints one
// "clawpatrol-sandbox: <step>: <reason>" line on stderr and exits 87.
void stage1();

bool stage1_wired() noexcept;

}  // namespace sandbox_host
