# The host's Debian ZooKeeper (libzookeeper-java's jars and the jars their
# manifests name) and its Java runtime (bin/java, lib/, conf/ of the JVM
# directory, the shared libraries ldd lists for the launcher and libjvm),
# copied as plain files, at the host's paths, into an empty image, with
# zkmember (cmd/zkmember, a static Go binary) as the entrypoint: it writes
# the member's zoo.cfg and myid under /data from its arguments, then execs
# the runtime. The build context is made in Go by
# bench/contenders/zookeeper: this file, rootfs/ and an empty data/ and
# tmp/. No shell in the image. The member runs as 65534, which owns /data.
FROM scratch
COPY rootfs/ /
COPY --chown=65534:65534 data/ /data/
COPY --chown=65534:65534 tmp/ /tmp/
USER 65534:65534
ENTRYPOINT ["/zkmember"]
