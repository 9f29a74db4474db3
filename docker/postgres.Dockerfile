# The host's Debian PostgreSQL server (the postgres binary, the shared
# libraries ldd lists, its share/ directory, plpgsql and the UTC zone
# file) copied as plain files, at the host's paths, into an empty image,
# with a data directory made by the host's initdb as a non-root user
# (trust authentication from any address: the server is reached only on
# the run's private network). The build context is made in Go by
# bench/contenders/postgres: this file plus rootfs/ and pgdata/data. It is
# a text/template: {{.Postgres}} is the server binary's path. No shell and
# no initdb run inside the image. The server runs as 65534, which owns the
# data directory.
FROM scratch
COPY rootfs/ /
COPY --chown=65534:65534 pgdata/ /var/lib/postgresql/
USER 65534:65534
ENTRYPOINT ["{{.Postgres}}"]
CMD ["-D", "/var/lib/postgresql/data", "-c", "listen_addresses=*", "-c", "port=5432"]
