#!/usr/bin/env bash
# Builds the Kubernetes binaries this project runs, from Go modules, because
# release downloads do not reach this machine: kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl in
# ONE `go build` (their shared packages compile once), plus etcd. They are
# cached outside the clone, keyed by version, so envtest (etcd and
# kube-apiserver) and the single-node cluster (all of them) pay for one
# build on a cold machine. A no-op when every binary is cached.
#
# usage: hack/build-kube.sh KUBE_VERSION ETCD_VERSION   (prints the cache dir last)
set -euo pipefail

kube_version=${1:?kubernetes version, e.g. v1.37.2}
etcd_version=${2:?etcd version, e.g. v3.7.3}
staging_version="v0${kube_version#v1}"   # v1.37.2 -> v0.37.2
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

cache="${XDG_CACHE_HOME:-$HOME/.cache}/ticketfair/kube/${kube_version}-etcd${etcd_version}"
mkdir -p "$cache"
# one build at a time: a second caller waits for the first one's binaries
exec 9>"$cache.lock"
flock 9

missing() { for b in "$@"; do [ -x "$cache/$b" ] || return 0; done; return 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if missing etcd; then
  echo ">> building etcd ${etcd_version} (about a minute)" >&2
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init kubebuild.local/etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@${etcd_version}" >/dev/null
  go build -trimpath -ldflags=-s -o "$cache/etcd" go.etcd.io/etcd/server/v3
fi

if missing "${cmds[@]}"; then
  echo ">> building ${cmds[*]} ${kube_version} in one go build (12-25 minutes cold)" >&2
  start=$(date +%s)
  mkdir -p "$work/kube/out" && cd "$work/kube"
  go mod init kubebuild.local/kube >/dev/null 2>&1
  # k8s.io/kubernetes replaces its staging modules with local paths; point
  # each of them at the published module of the matching release instead.
  gomod=$(go mod download -json "k8s.io/kubernetes@${kube_version}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "require k8s.io/kubernetes ${kube_version}"
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9./-]*\) => \./staging/.*#replace \1 => \1 '"${staging_version}"'#p' "$gomod"
  } >> go.mod
  pkgs=()
  for c in "${cmds[@]}"; do
    # each command's own dependencies must be in go.sum before the build
    go get "k8s.io/kubernetes/cmd/$c@${kube_version}" >/dev/null
    pkgs+=("k8s.io/kubernetes/cmd/$c")
  done
  minor=${kube_version#v1.}; minor=${minor%%.*}
  go build -trimpath -o out/ -ldflags "-s \
    -X k8s.io/component-base/version.gitVersion=${kube_version} \
    -X k8s.io/component-base/version.gitMajor=1 \
    -X k8s.io/component-base/version.gitMinor=${minor}" \
    "${pkgs[@]}"
  mv out/* "$cache/"
  echo ">> built ${cmds[*]} in $(( $(date +%s) - start ))s" >&2
fi
echo "$cache"
