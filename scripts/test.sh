#!/usr/bin/env bash
# Runs every test of the project: formatting and vet checks, the whole
# suite (with the fuzz targets' seed corpora), and the runtime's
# concurrency under the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -count=1 ./...
go test -count=1 -race ./converters/... ./internal/worker/... ./internal/herder/... ./internal/group/... ./internal/server/... ./internal/storage/... ./connectors/... ./cmd/connectctl/... ./client/...
