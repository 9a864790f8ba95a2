#!/bin/sh
# Runs Dex and Idenplane side by side under one load generator
# (docs/performance.md, "Against Dex"). Usage, from the repository root:
#   docs/dex/compare.sh [loadtest flags...]
# DEX is the Dex binary (default ./bin/dex); the load test is ./bin/idenplane.
set -eu
DEX=${DEX:-./bin/dex}
work=$(mktemp -d)
trap 'kill $memory $sqlite 2>/dev/null || true; rm -rf "$work"' EXIT

# One Dex per storage, on ports of their own.
start() { # name port storage-yaml
	{
		printf '%s\n' "$3"
		sed -e "s|127.0.0.1:5556|127.0.0.1:$2|g" docs/dex/dex.yaml
	} >"$work/$1.yaml"
	"$DEX" serve "$work/$1.yaml" >"$work/$1.log" 2>&1 &
}
start memory 5556 'storage: {type: memory}'
memory=$!
start sqlite 5557 "storage: {type: sqlite3, config: {file: $work/dex.db}}"
sqlite=$!
for port in 5556 5557; do
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$port/dex/.well-known/openid-configuration" >/dev/null && break
		sleep 0.1
	done
done

./bin/idenplane loadtest -scenarios cc-rs256,password,refresh \
	-peer "dex-memory=http://127.0.0.1:5556/dex,pid=$memory" \
	-peer "dex-sqlite=http://127.0.0.1:5557/dex,pid=$sqlite" "$@"
