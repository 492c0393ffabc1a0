# connectd as a static, non-root image on an empty base: the binaries,
# CA certificates, a passwd entry for the user, and a data directory.
# scripts/image.sh compiles the binaries on the host and stages them, so
# that no build image has to be pulled:
#
#   bash scripts/image.sh [TAG]      # default connectd:dev
#
# The default command runs a standalone worker on its embedded broker
# (/etc/connectd/worker.properties); give `distributed PATH` for a cluster
# member (examples/kubernetes).
FROM scratch
COPY rootfs/ /
COPY --chown=65532:65532 data/ /data/
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8083
ENTRYPOINT ["/usr/local/bin/connectd"]
CMD ["standalone", "/etc/connectd/worker.properties"]
