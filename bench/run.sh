#!/usr/bin/env bash
# Measures connectd against its performance targets and prints one table.
# Run from anywhere (typically the repository root): bash bench/run.sh
# Extra arguments go to connectd-bench (e.g. -figures startup, -lines 2000000);
# see bench/README.md. A figure missing its target prints MISS; the script
# exits non-zero only when something fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v go >/dev/null 2>&1; then
	echo "bench/run.sh: go is not in PATH" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/connectd-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "bench/run.sh: building connectd and connectd-bench" >&2
go build -o "$tmp/connectd" ./cmd/connectd
go build -o "$tmp/connectd-bench" ./bench/cmd/connectd-bench

"$tmp/connectd-bench" -connectd "$tmp/connectd" -work "$tmp/work" "$@"
