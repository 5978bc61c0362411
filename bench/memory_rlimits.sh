#!/usr/bin/env bash
# Which rlimit can hold [limits] memory where a launch has no cgroup: runs a C program,
# python3, a Go program and tests/go's go-plugin gRPC plugin (Debian's Go, GOPATH mode, no
# module proxy) under RLIMIT_AS and under RLIMIT_DATA (prlimit), each at 2G and at 64M, and
# prints whether each starts (a 1 MiB touch; the plugin's handshake line) and whether a
# 6,000 MiB touch is stopped. Unsandboxed: the rlimits alone, as the plugin's process gets
# them. docs/security-model.md, "Resource limits", has the results.
#
# Usage, from the repository root: bash bench/memory_rlimits.sh [BOUND_MIB...]  (default 2048 64)
set -euo pipefail

source_dir=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bounds=("$@")
[[ ${#bounds[@]} -gt 0 ]] || bounds=(2048 64)

cat >"$work/toucher.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long mib = argc > 1 ? atol(argv[1]) : 1;
  for (long i = 0; i < mib; ++i) {
    char *chunk = malloc(1 << 20);
    if (!chunk) { printf("malloc failed after %ld MiB\n", i); return 1; }
    for (long j = 0; j < (1 << 20); j += 4096) chunk[j] = 1;
  }
  printf("touched %ld MiB\n", mib);
  return 0;
}
C
cat >"$work/toucher.py" <<'PY'
import sys
chunks = [b"\x01" * (1 << 20) for _ in range(int(sys.argv[1]))]
print("touched", len(chunks), "MiB")
PY
mkdir -p "$work/go/src/toucher"
cat >"$work/go/src/toucher/main.go" <<'GO'
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	mib, _ := strconv.Atoi(os.Args[1])
	chunks := make([][]byte, 0, mib)
	for i := 0; i < mib; i++ {
		chunk := make([]byte, 1<<20)
		for j := 0; j < len(chunk); j += 4096 {
			chunk[j] = 1
		}
		chunks = append(chunks, chunk)
	}
	fmt.Println("touched", len(chunks), "MiB")
}
GO
cc -O2 -o "$work/toucher_c" "$work/toucher.c"
export GO111MODULE=off GOPROXY=off GOFLAGS= GOCACHE=$work/go-cache
GOPATH=$work/go go build -o "$work/toucher_go" toucher
GOPATH=$source_dir/go:$source_dir/tests/go:/usr/share/gocode \
  go build -o "$work/grpc_plugin" gopluginsandbox/grpcplugin
go version

touch_under() { # resource bytes program...
  local out status=0
  out=$(prlimit --"$1"="$2" -- "${@:3}" 2>&1) || status=$?
  echo "exit $status $(grep -m1 -E 'touched|failed|Error|fatal error' <<<"$out" | cut -c1-60)"
}
for resource in as data; do
  for mib in "${bounds[@]}"; do
    bytes=$((mib << 20))
    for program in "$work/toucher_c" "python3 $work/toucher.py" "$work/toucher_go"; do
      name=$(basename "${program##* }")
      printf 'RLIMIT_%-4s %5sM %-12s start: %-40s 6000 MiB: %s\n' "${resource^^}" "$mib" "$name" \
        "$(touch_under "$resource" "$bytes" $program 1)" \
        "$(touch_under "$resource" "$bytes" $program 6000)"
    done
    handshake=$(SANDBOX_HOST_TEST_PLUGIN=reporter PLUGIN_PROTOCOL_VERSIONS=1 timeout 3 \
      prlimit --"$resource"="$bytes" -- "$work/grpc_plugin" 2>&1 |
      grep -m1 -oE '^1\|1\|unix|fatal error.*|runtime/cgo.*' || true)
    printf 'RLIMIT_%-4s %5sM %-12s start: %s\n' "${resource^^}" "$mib" grpc_plugin "${handshake:-none}"
  done
done
