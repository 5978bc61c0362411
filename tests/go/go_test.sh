#!/usr/bin/env bash
# Vets and tests Go packages in GOPATH mode with Debian's Go toolchain, never the network.
# Exits 77 (ctest's skip), saying why, when the toolchain or a Go package they import is missing.
# Usage: go_test.sh SOURCE_DIR BINARY_DIR SANDBOX_HOST [--needs IMPORT_PATH=DEBIAN_PACKAGE]... PACKAGE...
set -euo pipefail

source_dir=$1 binary_dir=$2
export SANDBOX_HOST=$3
shift 3
needs=()
while [[ ${1-} == --needs ]]; do
  needs+=("$2")
  shift 2
done

if ! command -v go >/dev/null; then
  echo "SKIP: no go in PATH; install golang-go (scripts/setup.sh)"
  exit 77
fi
if [[ ! -x $SANDBOX_HOST ]]; then
  echo "go_test.sh: $SANDBOX_HOST is not executable; build the sandbox-host target first" >&2
  exit 1
fi
export GOPATH=$source_dir/go:$source_dir/tests/go:/usr/share/gocode
export GO111MODULE=off GOPROXY=off GOFLAGS= GOCACHE=$binary_dir/go-cache
for need in "${needs[@]}"; do
  if ! go list "${need%%=*}" >/dev/null 2>&1; then
    echo "SKIP: Go package ${need%%=*} is not in GOPATH ($GOPATH); install ${need#*=} (scripts/setup.sh)"
    exit 77
  fi
done
go vet "$@"
exec go test -count=1 -v "$@"
