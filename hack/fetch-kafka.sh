#!/usr/bin/env bash
# Fetches the Apache Kafka broker (KRaft) that the tests, `make chaos`,
# `make bench`, `make demo KAFKA=apache` and the e2e run, with Maven from
# the pinned hack/kafka/pom.xml: the broker's jars and their runtime
# dependencies are copied into a cache outside the clone, keyed by the pom's
# content, and linked to bin/kafka, where internal/localsvc looks first.
# Nothing is fetched at test time. A no-op when cached.
#
# usage: hack/fetch-kafka.sh   (prints the Kafka home, holding libs/, last)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pom="$root/hack/kafka/pom.xml"
version=$(sed -n 's#.*<kafka.version>\(.*\)</kafka.version>.*#\1#p' "$pom")
key=$(sha256sum "$pom" | cut -c1-12)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ticketfair/kafka-${version}-${key}"
mkdir -p "$(dirname "$cache")" "$root/bin"
exec 9>"$cache.lock"
flock 9

if [ ! -f "$cache/libs/.complete" ]; then
  command -v mvn >/dev/null && command -v java >/dev/null || {
    echo "fetch-kafka: needs java (17+) and mvn: hack/install-deps.sh installs them" >&2; exit 1; }
  echo ">> fetching Apache Kafka ${version} with Maven (a minute cold)" >&2
  rm -rf "$cache"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
    -DoutputDirectory="$cache/libs" >&2
  ls "$cache/libs/kafka_2.13-${version}.jar" "$cache/libs/kafka-tools-${version}.jar" >/dev/null
  echo "$version" > "$cache/VERSION"
  touch "$cache/libs/.complete"
fi

ln -sfn "$cache" "$root/bin/kafka"
echo "$cache"
