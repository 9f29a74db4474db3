# PgBouncer in transaction pooling mode in front of PostgreSQL, both the
# host's Debian packages copied as plain files, at the host's paths, into
# an empty image: postgres.Dockerfile's server and data directory, plus
# pgbouncer, sh (dash), rm and their shared libraries, and pgbouncer.ini
# beside the data directory. The build context is made in Go by
# bench/contenders/postgres (PgBouncerImage). It is a text/template:
# {{.Sh}} is the shell's path, {{.Script}} the pair script as a JSON
# string: a killed start's stale lock files removed, PostgreSQL in
# the background on a Unix socket only, then exec PgBouncer on port 6432,
# so that PgBouncer is the container's init. Both
# run as 65534, which owns the data directory.
FROM scratch
COPY rootfs/ /
COPY --chown=65534:65534 pgdata/ /var/lib/postgresql/
USER 65534:65534
ENTRYPOINT ["{{.Sh}}", "-c", {{.Script}}]
