#!/usr/bin/env bash
# Vets and tests Go code with Debian's Go toolchain, never the network.
#   --module: the module in go/ (standard library only), in module mode with GOPROXY=off.
#   otherwise: packages in GOPATH mode over Debian's Go packages (/usr/share/gocode), with the
#   module reachable at its import path through a GOPATH of this build's own.
# Exits 77 (ctest's skip), saying why, when the toolchain or a Go package they import is missing.
# Usage: go_test.sh SOURCE_DIR BINARY_DIR SANDBOX_HOST [--module | [--needs IMPORT_PATH=DEBIAN_PACKAGE]... PACKAGE...]
set -euo pipefail

source_dir=$1 binary_dir=$2
export SANDBOX_HOST=$3
shift 3

if ! command -v go >/dev/null; then
  echo "SKIP: no go in PATH; install golang-go (scripts/setup.sh)"
  exit 77
fi
if [[ ! -x $SANDBOX_HOST ]]; then
  echo "go_test.sh: $SANDBOX_HOST is not executable; build the sandbox-host target first" >&2
  exit 1
fi
export GOPROXY=off GOFLAGS= GOCACHE=$binary_dir/go-cache
module_path=$(sed -n 's/^module //p' "$source_dir/go/go.mod")

if [[ ${1-} == --module ]]; then
  cd "$source_dir/go"
  export GO111MODULE=on GOPATH=$binary_dir/go-module-path
  go vet ./...
  exec go test -count=1 -v ./...
fi

needs=()
while [[ ${1-} == --needs ]]; do
  needs+=("$2")
  shift 2
done
# GOPATH mode finds a package at GOPATH/src/<import path>: the module's directory is linked
# there, so that the tests import it by the path a module-mode gateway writes.
gopath=$binary_dir/go-gopath
mkdir -p "$gopath/src/$(dirname "$module_path")"
ln -sfn "$source_dir/go" "$gopath/src/$module_path"
export GOPATH=$gopath:$source_dir/tests/go:/usr/share/gocode GO111MODULE=off
for need in "${needs[@]}"; do
  if ! go list "${need%%=*}" >/dev/null 2>&1; then
    echo "SKIP: Go package ${need%%=*} is not in GOPATH ($GOPATH); install ${need#*=} (scripts/setup.sh)"
    exit 77
  fi
done
go vet "$@"
exec go test -count=1 -v "$@"
