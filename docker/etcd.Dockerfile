# The etcd server built by this project (docker/etcd, its own Go module)
# as a static binary alone in an empty image. The build context is made in
# Go by bench/contenders/etcd: this file, the binary etcd and an empty
# data/ directory, which becomes /data owned by the server's user (the
# image has no other writable place). Members are configured entirely by
# flags (--name, --initial-cluster, ...; see etcdlock.MemberArgs).
FROM scratch
COPY etcd /etcd
COPY --chown=65534:65534 data/ /data/
USER 65534:65534
ENTRYPOINT ["/etcd"]
CMD ["--data-dir", "/data/member"]
