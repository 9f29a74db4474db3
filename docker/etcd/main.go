// Command etcd is the etcd server (go.etcd.io/etcd/server/v3, its etcdmain
// entry point) built by this project for the bench's etcd contender, so
// that no registry image is needed. It lives in a module of its own, so the
// project's go.mod does not take on the server's dependencies; the bench
// builds it with CGO_ENABLED=0 into a static binary (bench/contenders/etcd).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
