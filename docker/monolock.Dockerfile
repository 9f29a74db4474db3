# The monolock server image users run (README, "Run the server"): the
# image the bench builds from ./cmd/monolock (a static binary in scratch,
# user 65534), with its ports and configuration declared. Built by
# `make images` (docker/images) as monolock-bench/monolock:latest; BASE is
# the bench image of the same build. The bench keeps using its own image
# without EXPOSE: testcontainers publishes the exposed ports of an image
# when the bench asks for none, which would add docker-proxy to its runs.
ARG BASE
FROM ${BASE}
# protocol, ops HTTP (/metrics /healthz /readyz), admin API
EXPOSE 7070 9090 7071
# Every flag has an environment variable (flag beats env beats default);
# the defaults below are the server's own, listed for `docker inspect`.
# Set the others with -e: MONOLOCK_OPS_LISTEN_ADDRESS,
# MONOLOCK_ADMIN_LISTEN_ADDRESS, MONOLOCK_TLS_CERT, MONOLOCK_TLS_KEY,
# MONOLOCK_TLS_CLIENT_CA, MONOLOCK_ACL_FILE, MONOLOCK_AUDIT_LOG.
ENV MONOLOCK_LISTEN_ADDRESS=0.0.0.0:7070 \
    MONOLOCK_IO_TIMEOUT=5s \
    MONOLOCK_LOG_LEVEL=info \
    MONOLOCK_LOG_FORMAT=text
LABEL org.opencontainers.image.title="monolock" \
      org.opencontainers.image.description="monolock lock server: one claim per TCP connection, FIFO queues, fencing tokens"
