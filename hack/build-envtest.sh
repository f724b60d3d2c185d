#!/usr/bin/env bash
# Puts envtest's assets (etcd and kube-apiserver) into the destination
# directory. They come from hack/build-kube.sh's cache, which builds them
# from Go modules in the same `go build` as the single-node cluster's other
# Kubernetes binaries, so a cold machine pays for that build once.
#
# usage: hack/build-envtest.sh DEST_DIR KUBE_VERSION ETCD_VERSION
set -euo pipefail

dest=${1:?destination directory}
kube_version=${2:?kubernetes version, e.g. v1.37.2}
etcd_version=${3:?etcd version, e.g. v3.7.3}

cache=$("$(dirname "$0")/build-kube.sh" "$kube_version" "$etcd_version" | tail -1)
mkdir -p "$dest"
for b in etcd kube-apiserver kubectl; do
  ln -f "$cache/$b" "$dest/$b" 2>/dev/null || cp -f "$cache/$b" "$dest/$b"
done
echo ">> envtest assets in $dest"
