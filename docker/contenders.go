package docker

import _ "embed"

// Etcd is the Dockerfile for the etcd server binary (built from the
// module in docker/etcd) in a scratch image; the context holds the binary
// etcd and an empty data/ directory.
//
//go:embed etcd.Dockerfile
var Etcd string

// Postgres is the Dockerfile for the host's PostgreSQL server in a
// scratch image; the context holds rootfs/ (server, libraries, share
// files) and pgdata/data (a data directory made by initdb). It is a
// text/template: {{.Postgres}} is the server binary's path.
//
//go:embed postgres.Dockerfile
var Postgres string

// ZooKeeper is the Dockerfile for the host's ZooKeeper jars and Java
// runtime in a scratch image; the context holds rootfs/ (runtime, jars,
// libraries, the zkmember entrypoint) and empty data/ and tmp/.
//
//go:embed zookeeper.Dockerfile
var ZooKeeper string

// PostgresPgBouncer is the Dockerfile for PgBouncer in front of the host's
// PostgreSQL in one scratch image (bench/contenders/postgres builds its
// context). It is a text/template: {{.Sh}} is the shell's path,
// {{.Script}} the JSON-quoted script that runs both.
//
//go:embed postgres-pgbouncer.Dockerfile
var PostgresPgBouncer string
