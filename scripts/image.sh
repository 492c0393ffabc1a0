#!/usr/bin/env bash
# Builds the connectd container image (Dockerfile): static binaries
# compiled here, staged with CA certificates and a passwd entry, then
# `docker build` (or podman) of that directory. Usage: scripts/image.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-connectd:dev}"
engine="$(command -v docker || command -v podman || true)"
[ -n "$engine" ] || { echo "no container engine (docker or podman)"; exit 1; }
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/rootfs/usr/local/bin" "$stage/rootfs/etc/ssl/certs" "$stage/rootfs/etc/connectd" "$stage/data"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/rootfs/usr/local/bin/connectd" ./cmd/connectd
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/rootfs/usr/local/bin/connectctl" ./cmd/connectctl
cp /etc/ssl/certs/ca-certificates.crt "$stage/rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' > "$stage/rootfs/etc/passwd"
cat > "$stage/rootfs/etc/connectd/worker.properties" <<'PROPS'
# A standalone worker on its embedded broker, reachable from outside the
# container on REST (8083); its broker listens inside it (the embedded one
# advertises the address it listens on); everything is kept under /data.
listeners=http://:8083
embedded.kafka.listeners=127.0.0.1:9092
embedded.kafka.data.dir=/data/kafka
offset.storage.file.filename=/data/connect.offsets
PROPS
cp Dockerfile "$stage/"
"$engine" build -t "$tag" "$stage"
echo "built $tag"
