#!/usr/bin/env bash
# The whole suite: install what is missing, build everything, run every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600

# Bounded fuzzing (fuzz/): a clang build tree of the fuzz targets alone, each target run for
# 20 s from its seed corpus. A crash or a broken property stops libFuzzer with an error, which
# fails the suite; the input that did it is kept in build-fuzz/artifacts/.
CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSANDBOX_HOST_FUZZ=ON
cmake --build build-fuzz -j"$(nproc)"
mkdir -p build-fuzz/artifacts
for target in http_request http_response socks5 hook_input broker_request config launch_request; do
  dictionary=()
  if [[ $target == http_* ]]; then dictionary=(-dict=fuzz/http.dict); fi
  if [[ -f fuzz/$target.dict ]]; then dictionary=(-dict="fuzz/$target.dict"); fi
  mkdir -p "build-fuzz/corpus/$target"
  "build-fuzz/fuzz/fuzz_$target" -max_total_time=20 -timeout=10 -rss_limit_mb=2048 \
    "${dictionary[@]}" -artifact_prefix="build-fuzz/artifacts/$target-" \
    "build-fuzz/corpus/$target" "fuzz/corpus/$target"
done
