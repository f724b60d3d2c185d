#!/usr/bin/env bash
# Runs the end-to-end test (test/e2e) on the single-node cluster: brings the
# cluster up when it is not running (and down again afterwards, also when
# the test fails), imports the image `make image` built, and runs the test
# inside the cluster's network namespace, where it reaches the Services'
# ClusterIPs and the node IP. Logs, the loadtest result and the audit stay
# in the directory it prints.
#
# usage: hack/e2e.sh IMAGE_DIR KUBE_VERSION ETCD_VERSION HELM   (make e2e)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

image_dir=${1:?image directory (make image)}
export KUBE_VERSION=${2:?kubernetes version} ETCD_VERSION=${3:?etcd version}
helm=${4:?helm binary}
node_ip=10.250.0.1
cluster_dir=${TICKETFAIR_CLUSTER_DIR:-/tmp/ticketfair-cluster}

if ! hack/cluster.sh status 2>/dev/null; then
  # ours to stop, whatever happens from here on
  trap 'rc=$?; "$root/hack/cluster.sh" down || rc=1; exit $rc' EXIT
  hack/cluster.sh up "$image_dir/pause.tar"
fi
hack/cluster.sh import "$image_dir/ticketfair.tar"

# loadtest and audit drive and check the sale from the host: they are in
# the development binary, not in the image. Access codes are issued with
# the image's own ticketfair binary, as an operator would.
CGO_ENABLED=0 go build -trimpath -o bin/ticketfair-dev ./workloads/cmd/ticketfair-dev
tool=$(realpath "$image_dir/root/ticketfair")
go test -c -tags e2e -o bin/e2e.test ./test/e2e
kube=$(hack/build-kube.sh "$KUBE_VERSION" "$ETCD_VERSION" | tail -1)
logs=$(mktemp -d /tmp/ticketfair-e2e.XXXXXX)
echo ">> e2e logs in $logs"

cd test/e2e
KUBECTL=$kube/kubectl HELM=$(realpath "$helm") \
TICKETFAIR_E2E_KUBECONFIG=$cluster_dir/pki/admin.kubeconfig \
TICKETFAIR_E2E_NODE_IP=$node_ip \
TICKETFAIR_E2E_IMAGE=${IMG:-ticketfair:dev} \
TICKETFAIR_E2E_BINARY=$(realpath ../../bin/ticketfair-dev) \
TICKETFAIR_E2E_TOOL=$tool \
TICKETFAIR_E2E_LOGS=$logs \
  ../../hack/cluster.sh exec ../../bin/e2e.test -test.v -test.count=1 -test.timeout=45m -test.run "${E2E_RUN:-.}" 2>&1 | tee "$logs/e2e.log"
