#!/usr/bin/env bash
# Builds Mailpit, the SMTP server with a REST API that the ticket mail tests
# and the local sale send to, from its Go module, because release downloads
# do not reach every machine. The binary is cached outside the clone, keyed
# by version, so a fresh clone on the same machine reuses it, and linked to
# bin/mailpit, where internal/localsvc looks first. A no-op when cached.
#
# usage: hack/build-mailpit.sh [VERSION]   (prints the binary's path last)
set -euo pipefail

version=${1:-v1.33.1}
root=$(cd "$(dirname "$0")/.." && pwd)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ticketfair/tools/mailpit-${version}"
mkdir -p "$cache" "$root/bin"
# one build at a time: a second caller waits for the first one's binary
exec 9>"$cache.lock"
flock 9

if [ ! -x "$cache/mailpit" ]; then
  echo ">> building mailpit ${version} (a few minutes cold)" >&2
  # Outside the clone: `go install pkg@version` builds the tool's own module
  # and ignores ours, and GOFLAGS such as -mod=vendor must not leak in.
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && GOBIN="$work" GOFLAGS= CGO_ENABLED=0 go install -trimpath -ldflags=-s "github.com/axllent/mailpit@${version}")
  mv "$work/mailpit" "$cache/mailpit"
fi

ln -sf "$cache/mailpit" "$root/bin/mailpit"
echo "$cache/mailpit"
