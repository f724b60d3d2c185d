#!/usr/bin/env bash
# Installs the system packages the tests and the local sale need, only when
# they are missing: redis-server and redis-sentinel, the PostgreSQL 15
# server, nginx (the cache in front of the queue), Chromium (the web pages' browser tests) and
# Prometheus with promtool (the monitoring tests) (Debian). With "cluster",
# also what `make image` and the single-node cluster (hack/cluster.sh) need:
# CA certificates and time zones for the image, containerd, runc, the CNI
# plugins, iptables, conntrack and openssl.
#
# usage: hack/install-deps.sh [cluster]
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# Sentinel failover tests and redis-cli/redis-benchmark (make bench)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
command -v redis-cli >/dev/null 2>&1 || missing+=(redis-tools)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client-15)
# the gate at which tests run as root needs the postgres user too
id postgres >/dev/null 2>&1 || missing+=(postgresql-15)
# headless browser of the web pages' tests (workloads/internal/web)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# promtool and a Prometheus server for the chart's alerts and dashboard
# (workloads/internal/demo/monitoring_test.go)
{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || missing+=(prometheus)
# the CDN stand-in in front of the queue (local sale, bench, queue tests)
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)

if [ "${1:-}" = cluster ]; then
  [ -r /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
  [ -d /usr/share/zoneinfo ] || missing+=(tzdata)
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  command -v iptables >/dev/null 2>&1 || missing+=(iptables)
  command -v conntrack >/dev/null 2>&1 || missing+=(conntrack)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo ">> installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged services; the tests start their own servers.
for svc in redis-server postgresql nginx containerd prometheus; do
  $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || $sudo service "$svc" stop >/dev/null 2>&1 || true
done
