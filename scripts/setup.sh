#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking sandbox-host needs.
# Idempotent: packages already present are left alone, and apt is not asked at all then.
set -euo pipefail

packages=(
  cmake make g++ pkg-config ca-certificates
  libboost1.81-dev          # Boost.DLL and Boost.Process v2, header-only here
  libpoco-dev               # Poco Foundation, JSON (later: Net, NetSSL, Crypto)
  libssl-dev                # OpenSSL 3: the egress proxy's CA and TLS
  libidn2-dev               # the allow list's IDN host names, as punycode
  libsystemd-dev            # sd-bus: cap-slot and scope ask systemd over D-Bus
  libyaml-cpp-dev           # kubeconfig: the lab's kubeconfig rewritten through a YAML library
  gpg gpg-agent             # sign: the host's gpg and agent; tests make a throwaway key
  dbus-daemon python3-dbusmock  # tests: a private bus with a mock of systemd
  curl git                  # real clients of the egress proxy in tests
  ripgrep                   # tests: the engine of Claude Code's Glob, checked against the hook
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
  nginx tinyproxy-bin       # bench/egress_report.py: the upstream and the peer proxy (nginx-light is
                            # a bigger metapackage in bookworm; tinyproxy-bin is the binary alone)
  clang-14                  # the bounded fuzz run in test.sh (fuzz/): libFuzzer is clang's
  libclang-rt-14-dev        # libFuzzer's and the sanitizers' runtime; clang-14 only recommends it
  golang-go                 # go/: the Go package for gateways, tested offline in GOPATH mode
  golang-github-hashicorp-go-plugin-dev  # tests/go: real go-plugin (1.0.1) gateways and plugins
  golang-google-grpc-dev    # tests/go: the gRPC plugin
  golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev  # gRPC's codec; wrapperspb
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
  # nginx is a benchmark peer that bench/egress_report.py starts with its own config, not a
  # service: the package starts one on port 80 of every address, which the egress tests'
  # stand-in upstream needs on its loopback address. Only the one this install started goes.
  if [[ " ${missing[*]} " == *" nginx "* ]] && pgrep -x nginx >/dev/null 2>&1; then
    nginx -s quit 2>/dev/null || pkill -x nginx || true
  fi
fi
