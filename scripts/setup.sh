#!/usr/bin/env bash
# Installs every Debian package that building, testing and benchmarking sandbox-host needs.
# Idempotent: packages already present are left alone, and apt is not asked at all then.
set -euo pipefail

packages=(
  cmake make g++ pkg-config ca-certificates
  libboost1.81-dev          # Boost.DLL and Boost.Process v2, header-only here
  libpoco-dev               # Poco Foundation, JSON: the tests' second JSON reader
  libssl-dev                # OpenSSL 3: the egress proxy's CA and TLS
  libidn2-dev               # the allow list's IDN host names, as punycode
  libsystemd-dev            # sd-bus: cap-slot and scope ask systemd over D-Bus
  libyaml-cpp-dev           # kubeconfig: the lab's kubeconfig rewritten through a YAML library
  libre2-dev                # the patterns ops match requests with, in linear time
  prometheus-cpp-dev        # serve's [metrics]: the metric model and the text format (core)
  prometheus                # tests/host/metrics: a real Prometheus scrapes serve; promtool checks the rules
  gpg gpg-agent             # sign: the host's gpg and agent; tests make a throwaway key
  dbus-daemon python3-dbusmock  # tests: a private bus with a mock of systemd
  curl git                  # real clients of the egress proxy in tests
  squid                     # tests/egress/proxy: the parent proxy [egress.parent] dials through
  ripgrep                   # tests: the engine of Claude Code's Glob, checked against the hook
  socat                     # tests/system/claude_code: Claude Code's own sandbox relays its network with it
  libcap-ng-dev
  libseccomp-dev
  libtomlplusplus-dev
  libcli11-dev
  libgtest-dev
  libbenchmark-dev
  util-linux                # setpriv, unshare: tests drop to an unprivileged user
  strace                    # tests/system/hostile: the environment of every execve of a launch
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
  dpkg-dev file             # cpack's DEB generator: dpkg-shlibdeps writes Depends, file finds ELFs
  lintian                   # scripts/package.sh checks the packages
  help2man                  # the packages' manual pages, from each command's --help
  debootstrap               # scripts/package-test.sh: the fresh Debian 12 root it installs into
  podman runc uidmap        # tests/system/container: sandbox-host inside containers (runc: crun refuses
                            # hybrid cgroups)
  systemd                   # tests/host/service: systemd-analyze verify/security of deploy/systemd's
                            # units, and the systemd booted in a podman container that runs them
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
  # squid's package starts the system's squid on port 3128 where it can; the tests start
  # their own with a config of their own.
  if [[ " ${missing[*]} " == *" squid "* ]] && pgrep -x squid >/dev/null 2>&1; then
    squid -k shutdown 2>/dev/null || pkill -x squid || true
  fi
fi

# tests/system/claude_code: the real Claude Code CLI at a pinned version, fetched by the npm
# client by package name (`npm pack`, which also checks the registry's integrity field). Only
# its native linux-x64 package is fetched (a single executable, so node runs nothing of it),
# checked against the sha512 written here before it is unpacked. Where npm is missing or the
# registry cannot be reached the suite still runs, and that test says why it skipped.
claude_version=2.1.197
claude_package=@anthropic-ai/claude-code-linux-x64@$claude_version
claude_sha512=rIlKmrY0QMyHgPRX/MYWNj039vbypICvI9jVe3rs9Xy2RnNklySjyPxqh62QadznzoftEO23uYQ1tFePcQ//bg==
claude_dir=/opt/sandbox-host-test/claude-code-$claude_version
if [[ $(uname -m) == x86_64 && ! -x $claude_dir/claude && $(id -u) -eq 0 ]]; then
  if ! command -v npm >/dev/null; then
    echo "setup: npm is not installed, so Claude Code $claude_version is not fetched; tests/system/claude_code will skip" >&2
  else
    claude_pack=$(mktemp -d)
    claude_tgz=$claude_pack/anthropic-ai-claude-code-linux-x64-$claude_version.tgz
    if (cd "$claude_pack" && timeout 600 npm pack --silent "$claude_package" >/dev/null) &&
        [[ -f $claude_tgz && $(openssl dgst -sha512 -binary "$claude_tgz" | base64 -w0) == "$claude_sha512" ]]; then
      mkdir -p "$claude_dir"
      tar -xzf "$claude_tgz" -C "$claude_dir" --strip-components=1 package/claude
      chmod 0755 "$claude_dir" "$claude_dir/claude"
    else
      echo "setup: npm pack $claude_package failed or gave other bytes than the pinned sha512; tests/system/claude_code will skip" >&2
    fi
    rm -rf "$claude_pack"
  fi
fi
