#!/usr/bin/env bash
# The main job: install what is missing, build, show what this host supports, and launch the
# demo plugin through `sandbox-host run` on the default config.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target sandbox-host demo-plugin

host=build/bin/sandbox-host
plugin=build/bin/demo-plugin

echo "== sandbox-host probe"
"$host" probe || true

echo "== sandbox-host run --name demo -- $plugin   (default config)"
status=0
"$host" run --name demo -- "$plugin" || status=$?
if [[ $status -eq 125 ]]; then
  # sandbox-host refused (exit 125): no confining backend works on this host. It never falls
  # back to running unsandboxed by itself; the operator's config has to say so.
  echo "== no confining backend works here (see probe above); the same plugin under the"
  echo "   operator's explicit opt-out, sandbox = \"off\" in examples/sandbox-host.toml:"
  "$host" run --config examples/sandbox-host.toml --name demo-unsandboxed -- "$plugin"
elif [[ $status -ne 0 ]]; then
  exit "$status"
fi
