#!/usr/bin/env bash
# Installs the system packages the tests and the local sale need, only when
# they are missing: redis-server, the PostgreSQL 15 server, Chromium (the
# web pages' browser tests) and Prometheus with promtool (the monitoring
# tests) (Debian).
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/lib/postgresql/15/bin/postgres ] || missing+=(postgresql-15)
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client-15)
# the gate at which tests run as root needs the postgres user too
id postgres >/dev/null 2>&1 || missing+=(postgresql-15)
# headless browser of the web pages' tests (workloads/internal/web)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# promtool and a Prometheus server for the chart's alerts and dashboard
# (workloads/internal/demo/monitoring_test.go)
{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || missing+=(prometheus)

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo ">> installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts the packaged services; the tests start their own servers.
for svc in redis-server postgresql prometheus; do
  $sudo systemctl disable --now "$svc" >/dev/null 2>&1 || $sudo service "$svc" stop >/dev/null 2>&1 || true
done
