#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking sandbox-host needs.
# Idempotent: packages already present are left alone, and apt is not asked at all then.
set -euo pipefail

packages=(
  cmake make g++ pkg-config ca-certificates
  libboost1.81-dev          # Boost.DLL and Boost.Process v2, header-only here
  libpoco-dev               # Poco Foundation, JSON (later: Net, NetSSL, Crypto)
  libssl-dev
  libcap-ng-dev
  libseccomp-dev
  libtomlplusplus-dev
  libcli11-dev
  libgtest-dev
  libbenchmark-dev
  util-linux                # setpriv, unshare: tests drop to an unprivileged user
  procps
  python3                   # bench/report.py turns benchmark JSON into docs/benchmarks.md
  hyperfine bubblewrap      # peers measured beside sandbox-host in bench/
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: missing packages ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
