#!/usr/bin/env bash
# The reference chapter's shipping pipeline (its Figure R.1) in one
# command: PostgreSQL (a throwaway logical-replication cluster holding the
# shop database) -> the Debezium-compatible CDC source -> Kafka (the
# embedded broker) -> the JDBC sink upserting into analytics.orders in the
# machine's PostgreSQL (127.0.0.1:5432, database test). Ctrl-C stops the
# worker cleanly, then the throwaway cluster. Run it again to carry on
# where it stopped; delete connectd-data/shipping/ (and DROP SCHEMA
# analytics CASCADE) to start over.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=connectd-data/shipping
shop_port=54329

command -v psql >/dev/null || { echo "run.sh: psql is not installed" >&2; exit 1; }
if ! psql -q -X -h 127.0.0.1 -U postgres -d test -c 'CREATE SCHEMA IF NOT EXISTS analytics' 2>/dev/null; then
  echo "run.sh: the analytics side needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust, database test)" >&2
  exit 1
fi

mkdir -p "$data"
echo "Starting the shop database (a throwaway cluster in $data/pg, port $shop_port)..." >&2
bash examples/shipping/pg.sh start "$data/pg" "$shop_port"
trap 'bash examples/shipping/pg.sh stop "$data/pg"' EXIT

if [ ! -x connectd ] || [ -n "$(find cmd connect connectors converters internal transforms go.mod go.sum -newer connectd -print -quit)" ]; then
  echo "Building ./connectd (the first build compiles for about 30 s)..." >&2
  go build -o connectd ./cmd/connectd
fi

cat >&2 <<MSG

The pipeline: shop.public.orders -> orders-source -> eip.orders.placed -> orders-sink -> analytics.orders
In another terminal:
  psql -h 127.0.0.1 -p $shop_port -U postgres shop -c "INSERT INTO orders (customer, item, quantity, amount) VALUES ('hooli', 'tape', 3, 9.90)"
  psql -h 127.0.0.1 -U postgres test -c 'SELECT * FROM analytics.orders ORDER BY id'
  curl -s localhost:8083/connectors/orders-source/offsets
  curl -s localhost:8083/connectors/orders-sink/offsets
Then examples/shipping/README.md: reprocess a sink, skip a bad row, reset.

MSG

./connectd standalone examples/shipping/worker.properties \
  examples/shipping/orders-source.json examples/shipping/orders-sink.json &
worker=$!
# Ctrl-C reaches the worker through this trap: a background job of a
# script starts with SIGINT ignored.
trap 'kill -INT $worker 2>/dev/null || true' INT TERM
status=0
while :; do
  wait $worker && status=0 || status=$?
  # wait returns early (above 128) when a trapped signal arrives: wait for
  # the worker's clean stop.
  kill -0 $worker 2>/dev/null || break
done
exit $status
