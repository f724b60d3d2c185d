#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, for the end-to-end test and
# for watching a sale by hand: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, a kubelet on containerd and runc, a CNI bridge and
# kube-proxy, with PodSecurity admission. Everything runs inside the network
# namespace "ticketfair" (node IP 10.250.0.1), so no traffic leaves the
# machine; services outside the cluster (Redis, PostgreSQL, Kafka) listen on
# the node IP, where pods reach them. The Kubernetes binaries come from
# hack/build-kube.sh's cache (built once per version, outside the clone).
#
# usage: hack/cluster.sh up PAUSE_IMAGE.tar  start the node; the tarball is the sandbox image
#        hack/cluster.sh import IMAGE.tar... import images into the node's containerd
#        hack/cluster.sh exec CMD...         run CMD inside the network namespace
#        hack/cluster.sh kubectl ARGS...     kubectl as cluster admin
#        hack/cluster.sh status              exit 0 when the node is up
#        hack/cluster.sh down                stop everything, check nothing is left
#
# Needs root (namespaces, mounts, cgroups) and Debian's containerd, runc,
# containernetworking-plugins, iptables and conntrack (hack/install-deps.sh cluster).
set -euo pipefail

kube_version=${KUBE_VERSION:-v1.37.2}
etcd_version=${ETCD_VERSION:-v3.7.3}
dir=${TICKETFAIR_CLUSTER_DIR:-/tmp/ticketfair-cluster}
netns=ticketfair
node=ticketfair-node
node_ip=10.250.0.1
pod_cidr=10.244.0.0/24
cluster_cidr=10.244.0.0/16
service_cidr=10.96.0.0/24
pause_image=${PAUSE_IMG:-ticketfair-pause:dev}
sock=$dir/containerd/containerd.sock
# Daemons join the namespace with nsenter: `ip netns exec` would remount
# /sys and hide the cgroup hierarchies from the kubelet.
in_ns=(nsenter --net=/run/netns/$netns)
# Stopped in this order; started in reverse.
daemons=(kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd)

log() { echo ">> $(date +%T) $*" >&2; }
die() { log "$*"; exit 1; }

bin() { echo "$kube_bin/$1"; }
kubectl() { "${in_ns[@]}" "$(bin kubectl)" --kubeconfig "$dir/pki/admin.kubeconfig" "$@"; }
ctr_() { ctr -a "$sock" -n k8s.io "$@"; }

kube_binaries() {
  kube_bin=$("$(dirname "$0")/build-kube.sh" "$kube_version" "$etcd_version" | tail -1)
}

# start NAME CMD...: run a daemon in the namespace, logging to logs/NAME.log.
start() {
  local name=$1; shift
  "${in_ns[@]}" "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/run/$name.pid"
}

running() { [ -f "$dir/run/$1.pid" ] && kill -0 "$(cat "$dir/run/$1.pid")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: poll CMD every half second.
wait_for() {
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || die "$what not ready after ${secs}s (logs in $dir/logs)"
    sleep 0.5
  done
}

up_netns() {
  ip netns add "$netns"
  ip -n "$netns" link set lo up
  # no dummy link type on every kernel: a veth pair, both ends inside
  ip -n "$netns" link add node0 type veth peer name node0p
  ip -n "$netns" addr add "$node_ip/24" dev node0
  ip -n "$netns" link set node0 up
  ip -n "$netns" link set node0p up
  # the components want a default route; nothing answers behind it
  ip -n "$netns" route add default via 10.250.0.254 dev node0
}

up_pki() {
  local p=$dir/pki
  cd "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 7 -subj /CN=ticketfair-cluster-ca 2>/dev/null
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  # cert NAME CN [O] [SAN]: a client (and with SAN, server) certificate
  cert() {
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "/CN=$2${3:+/O=$3}" 2>/dev/null
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s\n' \
      "${4:+serverAuth,}clientAuth" "${4:+subjectAltName=$4}" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 7 -extfile "$1.ext" 2>/dev/null
  }
  cert apiserver kube-apiserver "" "IP:$node_ip,IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  cert admin admin system:masters
  cert controller-manager system:kube-controller-manager
  cert scheduler system:kube-scheduler
  cert kubelet "system:node:$node" system:nodes
  cert kubelet-serving "system:node:$node" system:nodes "IP:$node_ip,DNS:$node"
  cert proxy system:kube-proxy
  for u in admin controller-manager scheduler kubelet proxy; do
    cat >"$u.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters: [{name: ticketfair, cluster: {server: "https://$node_ip:6443", certificate-authority: $p/ca.crt}}]
users: [{name: $u, user: {client-certificate: $p/$u.crt, client-key: $p/$u.key}}]
contexts: [{name: ticketfair, context: {cluster: ticketfair, user: $u}}]
current-context: ticketfair
EOF
  done
  cd - >/dev/null
}

up_containerd() {
  cat >"$dir/containerd/config.toml" <<EOF
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  # Without CAP_SYS_RESOURCE runc cannot set the sandboxes' negative
  # oom_score_adj ("can't get final child's PID from pipe: EOF"): clamp it.
  restrict_oom_score_adj = true
  # pods' network namespaces live under this cluster's directory
  netns_mounts_under = "$dir/netns"
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
EOF
  cat >"$dir/cni/10-bridge.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "ticketfair",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$dir/cni/ipam"}},
    {"type": "loopback"}
  ]
}
EOF
  start containerd containerd --config "$dir/containerd/config.toml"
  wait_for containerd 30 test -S "$sock"
}

up_control_plane() {
  local p=$dir/pki
  start etcd "$(bin etcd)" --name ticketfair --data-dir "$dir/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster ticketfair=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 \
    --quota-backend-bytes 1073741824
  start kube-apiserver "$(bin kube-apiserver)" --etcd-servers http://127.0.0.1:2379 \
    --advertise-address "$node_ip" --bind-address "$node_ip" --secure-port 6443 \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" --client-ca-file "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-cluster-ip-range "$service_cidr" --allow-privileged=false
  wait_for kube-apiserver 120 kubectl get --raw /readyz
  start kube-controller-manager "$(bin kube-controller-manager)" --kubeconfig "$p/controller-manager.kubeconfig" \
    --authentication-kubeconfig "$p/controller-manager.kubeconfig" --authorization-kubeconfig "$p/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false --use-service-account-credentials \
    --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
    --cluster-signing-cert-file "$p/ca.crt" --cluster-signing-key-file "$p/ca.key" \
    --allocate-node-cidrs --cluster-cidr "$cluster_cidr" --service-cluster-ip-range "$service_cidr"
  start kube-scheduler "$(bin kube-scheduler)" --kubeconfig "$p/scheduler.kubeconfig" \
    --authentication-kubeconfig "$p/scheduler.kubeconfig" --authorization-kubeconfig "$p/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --leader-elect=false
}

up_node() {
  local p=$dir/pki
  # no cluster DNS add-on: pods get this resolver, which answers nothing
  echo "nameserver 127.0.0.1" >"$dir/kubelet/resolv.conf"
  cat >"$dir/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $p/ca.crt}}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs          # runc with SystemdCgroup=false; no systemd here
failCgroupV1: false             # this host has cgroup v1
failSwapOn: false
oomScoreAdj: 0                  # the default -999 needs CAP_SYS_RESOURCE
containerRuntimeEndpoint: unix://$sock
imageServiceEndpoint: unix://$sock
tlsCertFile: $p/kubelet-serving.crt
tlsPrivateKeyFile: $p/kubelet-serving.key
podCIDR: $pod_cidr
resolvConf: $dir/kubelet/resolv.conf
podLogsDirectory: $dir/kubelet/pod-logs
clusterDomain: cluster.local
serializeImagePulls: false
maxPods: 40
# Absolute thresholds: the disk is shared with the rest of the machine, and
# the default 15% free of it flipped the node to DiskPressure (its taint
# left the operator's pod Pending) while gigabytes were free. Every signal
# is listed, as the ones left out would not keep their defaults.
evictionHard: {memory.available: 100Mi, nodefs.available: 1Gi, nodefs.inodesFree: 5%, imagefs.available: 1Gi, imagefs.inodesFree: 5%}
EOF
  start kubelet "$(bin kubelet)" --config "$dir/kubelet/config.yaml" --kubeconfig "$p/kubelet.kubeconfig" \
    --root-dir "$dir/kubelet/root" --node-ip "$node_ip" --hostname-override "$node" --v=1
  cat >"$dir/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $p/proxy.kubeconfig}
mode: iptables
clusterCIDR: $cluster_cidr
hostnameOverride: $node
# without br_netfilter, a pod's reply to another pod on the bridge skips
# the Service's reverse NAT: masquerade every Service connection instead
iptables: {masqueradeAll: true}
conntrack: {maxPerCore: 0}      # leave the host's nf_conntrack_max alone
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
EOF
  start kube-proxy "$(bin kube-proxy)" --config "$dir/kube-proxy.yaml"
}

node_ready() {
  kubectl get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True
}

cmd_up() {
  local pause_tar=${1:?usage: hack/cluster.sh up PAUSE_IMAGE.tar}
  [ "$(id -u)" -eq 0 ] || die "needs root"
  if cmd_status 2>/dev/null; then log "cluster already up"; return 0; fi
  local left
  left=$(leftovers)
  [ -z "$left" ] || die "a previous cluster left behind: $left (run hack/cluster.sh down)"
  kube_binaries
  local t0=$(date +%s)
  rm -rf "$dir" && mkdir -p "$dir"/{run,logs,pki,containerd,cni,etcd,kubelet/root,kubelet/pod-logs,netns}
  up_netns
  up_pki
  up_containerd
  ctr_ images import "$pause_tar" >/dev/null
  up_control_plane
  up_node
  wait_for "node $node" 120 node_ready
  # pods in a namespace are refused until its default ServiceAccount exists
  wait_for "ServiceAccount default" 60 kubectl -n default get serviceaccount default
  log "cluster up in $(( $(date +%s) - t0 ))s: node $node ($node_ip), kubeconfig $dir/pki/admin.kubeconfig"
}

cmd_status() {
  for d in "${daemons[@]}"; do running "$d" || return 1; done
  kube_binaries >/dev/null 2>&1 && node_ready
}

cmd_import() {
  for tar in "$@"; do ctr_ images import "$tar" >/dev/null; log "imported $tar"; done
}

# leftovers prints what a stopped cluster must not leave behind.
leftovers() {
  local ns_inode=""
  [ -e "/run/netns/$netns" ] && { echo "network namespace $netns"; ns_inode=$(stat -L -c %i "/run/netns/$netns"); }
  for d in "${daemons[@]}"; do running "$d" && echo "process $d ($(cat "$dir/run/$d.pid"))"; done
  local p
  for p in /proc/[0-9]*; do
    # shims name our socket; containers and daemons live in our namespaces
    if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$sock" ||
       { [ -n "$ns_inode" ] && [ "$(stat -L -c %i "$p/ns/net" 2>/dev/null)" = "$ns_inode" ]; }; then
      echo "process ${p#/proc/}: $(tr '\0' ' ' 2>/dev/null <"$p/cmdline" | cut -c1-100)"
    fi
  done
  awk -v d="$dir/" 'index($2, d) == 1 {print "mount " $2}' /proc/mounts
  ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null | sed 's/^/cgroup /' || true
}

cmd_down() {
  [ -d "$dir/run" ] || { log "no cluster in $dir"; return 0; }
  kube_binaries >/dev/null
  # 1. the kubelet stops the pods (StopPodSandbox releases their IPs and veths)
  if running kube-apiserver && running kubelet; then
    kubectl delete namespace -l ticketfair.io/e2e --wait=false >/dev/null 2>&1 || true
    kubectl delete pods --all-namespaces --all --grace-period=5 --wait=false >/dev/null 2>&1 || true
    local end=$(( $(date +%s) + 60 ))
    while [ -n "$(ctr_ task ls -q 2>/dev/null)" ] && [ "$(date +%s)" -lt "$end" ]; do sleep 1; done
  fi
  # 2. the daemons, by recorded pid: SIGTERM, then SIGKILL after 20 s
  for d in "${daemons[@]}"; do
    [ "$d" = containerd ] && continue
    stop_daemon "$d"
  done
  # 3. containers the kubelet did not stop: their shims exit with them
  if running containerd; then
    for c in $(ctr_ task ls -q 2>/dev/null); do ctr_ task kill -s KILL "$c" >/dev/null 2>&1 || true; done
    local end=$(( $(date +%s) + 20 ))
    while [ -n "$(ctr_ task ls -q 2>/dev/null | while read -r c; do ctr_ task delete "$c" >/dev/null 2>&1 || echo "$c"; done)" ] &&
      [ "$(date +%s)" -lt "$end" ]; do sleep 1; done
    # sandboxes' network namespaces (CNI teardown) go through the CRI
    for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$c" >/dev/null 2>&1 || true; done
  fi
  stop_daemon containerd
  # 4. mounts (container rootfs, kubelet volumes, pod netns), deepest first
  awk -v d="$dir/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  # 5. cgroups the kubelet made (children first)
  local h
  for h in /sys/fs/cgroup/*/kubepods; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} + 2>/dev/null || true; done
  ip netns del "$netns" 2>/dev/null || true
  local left
  left=$(leftovers)
  if [ -n "$left" ]; then
    log "cluster down, but left behind:"; echo "$left" >&2
    return 1
  fi
  rm -rf "$dir"
  log "cluster down: no process, mount, cgroup or namespace left"
}

stop_daemon() {
  running "$1" || return 0
  local pid
  pid=$(cat "$dir/run/$1.pid")
  kill "$pid" 2>/dev/null || return 0
  local end=$(( $(date +%s) + 20 ))
  while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  log "stopped $1"
}

verb=${1:-}
[ $# -gt 0 ] && shift
case "$verb" in
  up) cmd_up "$@" ;;
  down) cmd_down ;;
  status) cmd_status ;;
  import) cmd_import "$@" ;;
  exec) exec "${in_ns[@]}" "$@" ;;
  kubectl) kube_binaries; kubectl "$@" ;;
  *) sed -n '/^# usage:/,/^# *hack.*down/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
