# A host program and its shared libraries, as in host-redis.Dockerfile,
# run under the clockshift interposer: its wall clock is the real one plus
# the offset in /clockshift/offset, which the bench replaces through the
# Docker API to make this one server's clock jump (the host's clock,
# shared by every container, is not touched). The context (made in Go by
# bench/containers) holds everything under rootfs/: the program, its
# libraries, /usr/lib/clockshift.so (compiled with the host's C compiler
# when the image is built) and the offset file. The command comes from the
# server spec.
FROM scratch
COPY rootfs/ /
ENV LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu
ENV LD_PRELOAD=/usr/lib/clockshift.so
ENV CLOCKSHIFT_FILE=/clockshift/offset
USER 65534:65534
