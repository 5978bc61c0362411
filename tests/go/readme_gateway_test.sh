#!/usr/bin/env bash
# Builds the Go gateway that README.md shows, from README.md itself, as a module of its own in
# module mode with no module proxy, and runs it on the demo plugin: the go.mod line and the
# program a reader copies are the ones that work. Also checks that the module's Version is
# the release's (the CMake project's, which the Debian package carries).
# Exits 77 (ctest's skip), saying why, when Go is missing.
# Usage: readme_gateway_test.sh SOURCE_DIR BINARY_DIR SANDBOX_HOST DEMO_PLUGIN PROJECT_VERSION
set -euo pipefail

source_dir=$1 binary_dir=$2 demo_plugin=$4 project_version=$5
export SANDBOX_HOST=$3
if ! command -v go >/dev/null; then
  echo "SKIP: no go in PATH; install golang-go (scripts/setup.sh)"
  exit 77
fi

module_version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$source_dir/go/sandbox/version.go")
if [[ $module_version != "$project_version" ]]; then
  echo "FAIL: go/sandbox/version.go says $module_version, the project (CMakeLists.txt) $project_version" >&2
  exit 1
fi

work=$(mktemp -d "$binary_dir/readme-gateway.XXXXXX")
trap 'rm -rf "$work"' EXIT
gateway=$work/gateway
mkdir "$gateway" "$work/tmp"
# The fenced block right after each marker comment.
block_after() {
  awk -v marker="$1" '
    index($0, marker) { found = 1; next }
    found && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$source_dir/README.md"
}
block_after '<!-- go.mod of a gateway' >"$gateway/go.mod"
block_after '<!-- main.go of a gateway' >"$gateway/main.go"
module_path=$(sed -n 's/^module //p' "$source_dir/go/go.mod")
if ! grep -qx "require $module_path v$project_version" "$gateway/go.mod"; then
  echo "FAIL: README's go.mod does not require $module_path v$project_version:" >&2
  cat "$gateway/go.mod" >&2
  exit 1
fi
if [[ -n $(gofmt -l "$gateway/main.go") ]]; then
  echo "FAIL: README's main.go is not gofmt-formatted:" >&2
  gofmt -d "$gateway/main.go" >&2
  exit 1
fi
# The release is not published from here: the module comes from this checkout.
echo "replace $module_path => $source_dir/go" >>"$gateway/go.mod"

cd "$gateway"
export TMPDIR=$work/tmp # the gateway makes its socket dir there
export GO111MODULE=on GOPROXY=off GOFLAGS= GOCACHE=$binary_dir/go-cache GOPATH=$binary_dir/go-module-path
go vet .
go build -o gateway .
# The demo plugin prints go-plugin's handshake line on stdout from inside the sandbox.
output=$(./gateway "$demo_plugin" 2>"$gateway/stderr") || {
  echo "FAIL: the README's gateway exited $?; its stderr:" >&2
  cat "$gateway/stderr" >&2
  exit 1
}
if ! grep -q '^1|1|unix|.*|grpc$' <<<"$output"; then
  echo "FAIL: no go-plugin handshake line from the demo plugin; stdout: $output" >&2
  cat "$gateway/stderr" >&2
  exit 1
fi
echo "the README's gateway launched the demo plugin: $output"
