#!/usr/bin/env bash
# Builds the envtest assets (etcd and kube-apiserver) from Go modules, because
# release downloads do not reach this machine. The binaries are cached outside
# the clone, keyed by version, and copied (hard-linked where possible) into
# the destination directory. A no-op when both are present.
#
# usage: hack/build-envtest.sh DEST_DIR KUBE_VERSION ETCD_VERSION
set -euo pipefail

dest=${1:?destination directory}
kube_version=${2:?kubernetes version, e.g. v1.37.2}
etcd_version=${3:?etcd version, e.g. v3.7.3}
staging_version="v0${kube_version#v1}"   # v1.37.2 -> v0.37.2

cache="${XDG_CACHE_HOME:-$HOME/.cache}/ticketfair/envtest/${kube_version}-etcd${etcd_version}"
mkdir -p "$cache" "$dest"
dest=$(cd "$dest" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_etcd() {
  echo ">> building etcd ${etcd_version} (about a minute)"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init envtest.local/etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@${etcd_version}" >/dev/null
  go build -trimpath -ldflags=-s -o "$cache/etcd" go.etcd.io/etcd/server/v3
}

build_kube_apiserver() {
  echo ">> building kube-apiserver ${kube_version} (several minutes cold)"
  mkdir -p "$work/apiserver" && cd "$work/apiserver"
  go mod init envtest.local/apiserver >/dev/null 2>&1
  # k8s.io/kubernetes replaces its staging modules with local paths; point
  # each of them at the published module of the matching release instead.
  gomod=$(go mod download -json "k8s.io/kubernetes@${kube_version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "require k8s.io/kubernetes ${kube_version}"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9./-]*\) => \./staging/.*#replace \1 => \1 '"${staging_version}"'#p' "$gomod"
  } >> go.mod
  go get "k8s.io/kubernetes/cmd/kube-apiserver@${kube_version}" >/dev/null
  local minor=${kube_version#v1.}; minor=${minor%%.*}
  go build -trimpath -o "$cache/kube-apiserver" -ldflags "-s \
    -X k8s.io/component-base/version.gitVersion=${kube_version} \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=${minor}" \
    k8s.io/kubernetes/cmd/kube-apiserver
}

[ -x "$cache/etcd" ] || build_etcd
[ -x "$cache/kube-apiserver" ] || build_kube_apiserver

for b in etcd kube-apiserver; do
  ln -f "$cache/$b" "$dest/$b" 2>/dev/null || cp -f "$cache/$b" "$dest/$b"
done
if [ -x /usr/bin/kubectl ] && [ ! -e "$dest/kubectl" ]; then
  ln -s /usr/bin/kubectl "$dest/kubectl"
fi
echo ">> envtest assets in $dest"
