#!/usr/bin/env bash
# Starts a local deployment: PostgreSQL, NATS, three syncserver nodes and
# HAProxy in front of them on http://127.0.0.1:8080 (README.md here).
# Needs Debian's postgresql and haproxy packages and Go. Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
"$pgbin/initdb" -D "$work/pg" -U agentsync -A trust >/dev/null
"$pgbin/postgres" -D "$work/pg" -k "$work" -p 55432 -c listen_addresses=127.0.0.1 >"$work/pg.log" 2>&1 &
until "$pgbin/pg_isready" -h 127.0.0.1 -p 55432 >/dev/null 2>&1; do sleep 0.2; done
db="postgres://agentsync@127.0.0.1:55432/postgres?sslmode=disable"

# NATS: the server module this repository tests against (go.mod).
go build -o "$work/nats-server" github.com/nats-io/nats-server/v2
"$work/nats-server" -a 127.0.0.1 -p 54222 >"$work/nats.log" 2>&1 &

go build -o "$work/syncserver" ./server/cmd/syncserver
for i in 1 2 3; do
  "$work/syncserver" -addr "127.0.0.1:818$i" -store "$db" -node "node-$i" -nats nats://127.0.0.1:54222 &
done

sed -e 's/@BIND@/127.0.0.1:8080/' -e 's/@NODE_A@/127.0.0.1:8181/' \
    -e 's/@NODE_B@/127.0.0.1:8182/' -e 's/@NODE_C@/127.0.0.1:8183/' \
    examples/deploy/haproxy.cfg >"$work/haproxy.cfg"
echo "agentsync behind HAProxy: http://127.0.0.1:8080 (Ctrl-C stops it)"
haproxy -db -f "$work/haproxy.cfg"
