#!/usr/bin/env bash
# Installs the system packages (Debian) a make target needs, only those
# that are missing. One or more sets, each including the one before it:
#
#   demo    what the local sale starts (make demo, make chaos): redis-server,
#           the PostgreSQL 15 server (initdb, pg_ctl, pgbench and
#           pg_stat_statements come with it), nginx (the cache in front of
#           the queue) and zbar-tools (zbarimg reads the tickets' QR codes at
#           the sale's gates, and in the QR and ticket mail tests)
#   bench   demo's, redis-tools (redis-benchmark, redis-cli), and a Java 17
#           runtime and Maven, which fetch and run the Apache Kafka broker
#           (hack/fetch-kafka.sh) (make bench, make chaos, make demo
#           KAFKA=apache)
#   test    the default: bench's, and redis-sentinel (Sentinel failover
#           tests), postgresql-client-15 (psql, pg_basebackup for the standby),
#           Chromium (the web pages' browser tests), Prometheus with
#           promtool (the monitoring tests) (make test, make e2e)
#   cluster test's, and what `make image` and the single-node cluster
#           (hack/cluster.sh) need: CA certificates and time zones for the
#           image, containerd, runc, the CNI plugins, iptables, conntrack,
#           openssl and nsenter
#
# usage: hack/install-deps.sh [demo|chaos|bench|test|cluster]... (chaos is bench)
set -euo pipefail

level=0 # the largest set asked for: 1 demo, 2 bench, 3 test, 4 cluster
[ $# -gt 0 ] || set -- test
for set in "$@"; do
  case "$set" in
    demo) l=1 ;;
    bench | chaos) l=2 ;;
    test) l=3 ;;
    cluster) l=4 ;;
    *)
      echo "hack/install-deps.sh: unknown set \"$set\" (demo, chaos, bench, test or cluster)" >&2
      exit 2
      ;;
  esac
  [ "$l" -le "$level" ] || level=$l
done

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
# as root the servers run as the postgres user, which the package creates
id postgres >/dev/null 2>&1 || missing+=(postgresql-15)
[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || missing+=(nginx)
# zbarimg decodes the tickets' QR codes (the sale's gates; qrcode, ticketmail tests)
command -v zbarimg >/dev/null 2>&1 || missing+=(zbar-tools)

if [ "$level" -ge 2 ]; then
  { command -v redis-cli && command -v redis-benchmark; } >/dev/null 2>&1 || missing+=(redis-tools)
  # the Apache Kafka broker: Maven fetches it, Java runs it
  command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
fi

if [ "$level" -ge 3 ]; then
  command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
  command -v psql >/dev/null 2>&1 || missing+=(postgresql-client-15)
  # headless browser of the web pages' tests (workloads/internal/web)
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
  # promtool and a Prometheus server for the chart's alerts and dashboard
  # (workloads/internal/demo/monitoring_test.go)
  { command -v promtool && command -v prometheus; } >/dev/null 2>&1 || missing+=(prometheus)
fi

if [ "$level" -ge 4 ]; then
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
# each package once, in the order first named
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo ">> installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged services; the tests and the sale start their own servers.
for svc in redis-server postgresql nginx containerd prometheus; do
  $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || $sudo service "$svc" stop >/dev/null 2>&1 || true
done
