#!/usr/bin/env bash
# Remakes cmd/connectd/default.pgo, the CPU profile that `go build` uses to
# optimize connectd (profile-guided optimization): the hot paths of the
# file source, the JDBC source and the JDBC sink figures, each worker
# process profiled for its whole run, merged into one profile.
# Run from anywhere: bash bench/pgo.sh (needs the PostgreSQL that the JDBC
# figures use; see bench/README.md). Extra arguments go to connectd-bench.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/connectd-pgo.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "bench/pgo.sh: building connectd and connectd-bench" >&2
go build -o "$tmp/connectd" ./cmd/connectd
go build -o "$tmp/connectd-bench" ./bench/cmd/connectd-bench

"$tmp/connectd-bench" -connectd "$tmp/connectd" -work "$tmp/work" \
	-figures throughput,jdbc-source,jdbc-sink -cpuprofiles "$tmp/profiles" "$@" >&2

# The JDBC figures are skipped without PostgreSQL: a profile of the file
# source alone would leave the JDBC paths unoptimized.
if ! ls "$tmp"/profiles/jdbc-source-*.pprof >/dev/null 2>&1; then
	echo "bench/pgo.sh: no JDBC source profile (is PostgreSQL up?); default.pgo left as it is" >&2
	exit 1
fi
go tool pprof -proto "$tmp"/profiles/*.pprof > "$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/connectd/default.pgo
echo "bench/pgo.sh: wrote cmd/connectd/default.pgo ($(wc -c < cmd/connectd/default.pgo) bytes, $(ls "$tmp"/profiles | wc -l) profiles)" >&2
