#!/usr/bin/env bash
# Builds deploy/Containerfile's image from a build tree of this repository:
#   bash deploy/build-image.sh BUILD_DIR [TAG] [extra podman build options...]
# The context is a fresh directory holding `cmake --install`'s files under /usr/local and the
# image's config, so that no build tree or checkout is sent to the builder.
set -euo pipefail

build=${1:?usage: build-image.sh BUILD_DIR [TAG] [podman build options...]}
tag=${2:-sandbox-host:latest}
shift $(($# < 2 ? $# : 2))
deploy=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
builder=$(command -v podman || command -v docker) || {
  echo "build-image: neither podman nor docker is installed" >&2
  exit 1
}

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
DESTDIR=$context cmake --install "$build" --prefix /usr/local >/dev/null
install -D -m 0644 "$deploy/sandbox-host.toml" "$context/etc/sandbox-host/sandbox-host.toml"
"$builder" build -f "$deploy/Containerfile" -t "$tag" "$@" "$context"
