#!/usr/bin/env bash
# The install test: the Debian package on a fresh Debian 12 root that this script makes
# with debootstrap and enters with bubblewrap (a chroot would do for apt, but the kernel
# refuses a chrooted process the user namespace the namespaces backend makes). In the root
# it installs the package with apt, which fetches its Depends; runs `sandbox-host probe`;
# launches the demo plugin as root and as an unprivileged user; starts `sandbox-host serve`
# with the launch service and launches through it with `run --via` and sandbox-host-launch;
# reinstalls over an edited conffile; then purges the package and its dependencies and
# compares the root's file listing with the one taken before the install, less apt's and
# dpkg's own caches, lists and logs. Too slow for the suite (a few minutes, mostly
# debootstrap); its last result is in docs/operations.md, "Install".
#
#   bash scripts/package-test.sh             # builds the package first (scripts/package.sh)
#   bash scripts/package-test.sh DEB PLUGIN  # tests DEB, with PLUGIN as the demo plugin
#
# Needs root, debootstrap and bubblewrap (scripts/setup.sh installs them) and a Debian
# mirror, the first in this machine's apt sources.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

if (($# == 2)); then
  deb=$1 plugin=$2
else
  bash scripts/package.sh
  deb=$(ls build-deb/sandbox-host_*_amd64.deb)
  plugin=build-deb/bin/demo-plugin
fi

work=$(mktemp -d /var/tmp/sandbox-host-package-test.XXXXXX)
root=$work/root
trap 'rm -rf --one-file-system "$work"' EXIT

# The mirror apt already uses here: the one-line format's first `deb` line, else the deb822
# format's first URIs.
mirror=$(awk '$1 == "deb" && $2 !~ /^\[/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
if [[ -z $mirror ]]; then
  mirror=$(awk '$1 == "URIs:" {print $2; exit}' /etc/apt/sources.list.d/*.sources)
fi
echo "== debootstrap bookworm (minbase)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" ||
  { tail -20 "$work/debootstrap.log"; exit 1; }

# A command in the root: a minimal /dev, the host's /proc, /sys, pids and network; root
# keeps its capabilities. Not a pid namespace with a fresh /proc (bwrap's --unshare-pid
# --proc): bwrap masks /proc/sys and others of it, and the kernel then refuses the
# namespaces backend a /proc of its own; nor the host's /proc in a pid namespace, where a
# process's /proc/self is not the /proc/<pid> that the Landlock backend grants a plugin.
enter() {
  bwrap --bind "$root" / --bind /proc /proc --dev /dev --bind /sys /sys --tmpfs /run \
    --die-with-parent --cap-add ALL \
    --clearenv --setenv PATH /usr/sbin:/usr/bin:/sbin:/bin --setenv HOME /root \
    --setenv LANG C.UTF-8 --setenv DEBIAN_FRONTEND noninteractive -- "$@"
}

# What is there before the install: the package, the demo plugin (not part of the package),
# an unprivileged user to launch it as, and apt's lists.
install -D -m 0644 "$deb" "$root/root/$(basename "$deb")"
install -D -m 0755 "$plugin" "$root/opt/demo/demo-plugin"
enter useradd --create-home --shell /bin/bash plugin-user
enter apt-get update -q >/dev/null

# The root's files with their type, mode and owner, less what apt and dpkg keep for
# themselves (caches, lists, logs, the status database's files, debconf's cache).
listing() {
  (cd "$root" && find . -xdev \
    \( -path ./var/cache/apt -o -path ./var/lib/apt -o -path ./var/log \
       -o -path ./var/cache/debconf -o -path ./var/cache/ldconfig \
       -o -path ./var/lib/dpkg/triggers \) -prune -o \
    ! -path './var/lib/dpkg/status*' ! -path './var/lib/dpkg/available*' \
    ! -path './var/lib/dpkg/lock*' ! -path './var/lib/dpkg/diversions-old' \
    -printf '%y %m %u:%g %p\n' | LC_ALL=C sort)
}
listing >"$work/before"

echo "== apt-get install ./$(basename "$deb")"
enter apt-get install -y -q "/root/$(basename "$deb")" >"$work/install.log" ||
  { cat "$work/install.log"; exit 1; }
grep -E '^(Setting up|Unpacking) ' "$work/install.log" | sed 's/^/   /'

echo "== in the root"
enter bash -euo pipefail -c '
  # A launch of the demo plugin: it must exit 0 and print the go-plugin handshake line.
  launch() {
    "$@" >/tmp/out 2>/tmp/err || { echo "FAIL: $* exited $?"; cat /tmp/err; exit 1; }
    grep -qE "^1\|1\|unix\|/[^|]+\|grpc$" /tmp/out ||
      { echo "FAIL: no handshake line from $*"; cat /tmp/out /tmp/err; exit 1; }
  }

  echo "-- sandbox-host probe"
  sandbox-host probe >/tmp/probe
  grep -E "^(config|chosen|  [a-z]+ +(un)?available)" /tmp/probe | cut -c1-100
  grep -qx "config: /etc/sandbox-host/config.toml" /tmp/probe
  grep -qE "^chosen: (namespaces|landlock)$" /tmp/probe
  sandbox-host modules | grep -q /usr/lib/x86_64-linux-gnu/sandbox-host/modules/backend_namespaces.so

  echo "-- the demo plugin as root and as plugin-user, under each confining backend that works"
  launch sandbox-host run --name demo -- /opt/demo/demo-plugin
  echo "   as root under the chosen backend: handshake"
  for backend in $(awk "/^  (namespaces|landlock) +available/ {print \$1}" /tmp/probe); do
    launch setpriv --reuid plugin-user --regid plugin-user --init-groups --reset-env \
      sandbox-host run --backend "$backend" --name demo -- /opt/demo/demo-plugin
    echo "   as plugin-user under $backend: handshake"
  done

  echo "-- sandbox-host serve with [launcher] enabled in the conffile"
  sed -i "s/^#\[launcher\]$/[launcher]/" /etc/sandbox-host/config.toml
  sandbox-host serve 2>/tmp/serve.log &
  serve=$!
  socket=/var/lib/sandbox-host/launcher/launch.sock
  for _ in $(seq 100); do [[ -S $socket ]] && break; sleep 0.1; done
  [[ -S $socket ]] || { cat /tmp/serve.log; exit 1; }
  launch sandbox-host run --via "$socket" --name demo -- /opt/demo/demo-plugin
  echo "   run --via: handshake"
  launch sandbox-host-launch --via "$socket" -- /opt/demo/demo-plugin
  echo "   sandbox-host-launch: handshake"
  kill "$serve"
  wait "$serve" || true

  echo "-- a reinstall keeps the edited conffile"
  apt-get install -y -q --reinstall /root/sandbox-host_*_amd64.deb >/dev/null 2>&1
  grep -qx "\[launcher\]" /etc/sandbox-host/config.toml
  [[ -d /var/lib/sandbox-host ]]
  rm -f /tmp/probe /tmp/serve.log /tmp/out /tmp/err

  echo "-- apt-get purge --autoremove sandbox-host"
  apt-get purge -y -q --autoremove sandbox-host >/dev/null
  [[ ! -e /var/lib/sandbox-host && ! -e /etc/sandbox-host ]]
' || { echo "FAIL: package install test, in the root (above)" >&2; exit 1; }

listing >"$work/after"
if ! diff -u "$work/before" "$work/after"; then
  echo "FAIL: the purge left the root changed (- before the install, + after the purge)" >&2
  exit 1
fi
echo "== the root after purge lists as before the install: $(wc -l <"$work/before") entries"
echo "PASS: package install test, $((SECONDS - start)) s"
