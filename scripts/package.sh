#!/usr/bin/env bash
# Builds the Debian packages into build-deb/: sandbox-host_<version>_amd64.deb,
# sandbox-host-dev_<version>_amd64.deb and sandbox-host-dbgsym_<version>_amd64.ddeb
# (cmake/Packaging.cmake says what each holds). The tree is configured with prefix /usr, so
# the paths compiled into the executables are the packaged ones; tests and benchmarks are
# left out of it. Then lintian checks the two packages.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake -S . -B build-deb -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DSANDBOX_HOST_TESTS=OFF -DSANDBOX_HOST_BENCH=OFF >/dev/null
cmake --build build-deb -j"$(nproc)"
rm -f build-deb/*.deb build-deb/*.ddeb
(cd build-deb && cpack -G DEB)
ls -l build-deb/*.deb build-deb/*.ddeb

# What lintian still reports, and why it stays, is in docs/operations.md, "What lintian says".
lintian build-deb/*.deb || true
