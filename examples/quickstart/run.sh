#!/usr/bin/env bash
# The quickstart in one command: builds connectd, copies the sample input
# into connectd-data/quickstart/ (so that appending lines to it changes no
# tracked file), and runs a standalone worker on the embedded broker with a
# file source and a file sink.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p connectd-data/quickstart
[ -e connectd-data/quickstart/input.txt ] || cp examples/quickstart/input.txt connectd-data/quickstart/input.txt
if [ ! -x connectd ] || [ -n "$(find cmd connect connectors converters internal go.mod go.sum -newer connectd -print -quit)" ]; then
  echo "Building ./connectd (the first build compiles for about 30 s)..." >&2
  go build -o connectd ./cmd/connectd
fi
exec ./connectd standalone examples/quickstart/worker.properties \
  examples/quickstart/file-source.properties examples/quickstart/file-sink.json
