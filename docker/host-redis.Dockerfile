# The host's Debian redis-server and the shared libraries it loads (found
# with ldd), copied as plain files into an empty image. Used when no Redis
# image can be had from a registry. The build context is made in Go by
# bench/containers: this file plus rootfs/. The command is the bare name
# redis-server (found on the default PATH) because Redis picks its mode
# from argv[0], and the same command then works for registry images.
FROM scratch
COPY rootfs/ /
ENV LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
USER 65534:65534
CMD ["redis-server", "--port", "6379", "--protected-mode", "no", "--save", "", "--appendonly", "no"]
