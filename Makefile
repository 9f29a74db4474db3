# Thin targets: the logic lives in Go (cmd/monolock-bench)
# and in .ci/run. `make test` is what CI runs.

GO                  ?= go
FUZZTIME            ?= 10s
BENCH_ARGS          ?=
STATICCHECK_VERSION := v0.8.2
STATICCHECK         ?= $(shell command -v staticcheck 2>/dev/null || echo "$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)")

# testcontainers' reaper (Ryuk) needs a registry image; the project removes
# what it creates itself. Exactly this string.
export TESTCONTAINERS_RYUK_DISABLED := true

# Binaries built into bin/ when their main package exists.
BINARIES := $(wildcard cmd/monolock cmd/monolockctl cmd/monolock-bench)

.PHONY: build test test-short test-stress bench bench-quick bench-network chaos bench-chaos images cluster cluster-down test-kubernetes lint fuzz clean redis-server postgresql zookeeper cc cni-plugins

## build: static binaries (CGO_ENABLED=0) into bin/
build:
	@mkdir -p bin
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/ $(addprefix ./,$(BINARIES))

## test: every test, with the race detector, containers included; then
## monolock's benchmarks once each (-benchtime=1x), so that they cannot rot
test: redis-server postgresql zookeeper cc
	$(GO) test -race -count=1 -timeout 20m ./...
	$(GO) test -run '^$$' -bench . -benchtime=1x ./monolock/...

## test-short: the unit tests only (go test -short: no containers, clusters,
## emulated hosts, chromium or long soaks; no race detector), for a quick check while editing
test-short: redis-server cc
	$(GO) test -short -count=1 ./...

## test-stress: the packages that build emulated hosts or start servers and
## containers, under -race, several at a time (-p 4) as `go test ./...` runs
## them beside each other, STRESS_ROUNDS times (default 3); it stops at the
## first failing round. Run it after touching the network, a backend, a
## fault or a timing test: such a test may pass alone and fail beside others.
STRESS_ROUNDS ?= 3
STRESS_PACKAGES ?= ./bench/network/... ./bench/scenarios/... ./bench/backend/... ./bench/contenders/... ./bench/faults/... ./redisbench/...
test-stress: redis-server postgresql zookeeper cc
	@for i in $$(seq $(STRESS_ROUNDS)); do \
		echo "test-stress: round $$i of $(STRESS_ROUNDS)"; \
		$(GO) test -race -count=1 -p 4 -timeout 20m $(STRESS_PACKAGES) || exit 1; \
	done

## bench: the full suite into reports/<run-id>/
bench: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench run $(BENCH_ARGS)

## bench-quick: every scenario and contender, shortened to a few minutes
bench-quick: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench run --quick $(BENCH_ARGS)

## bench-network: latency, throughput, handover and fairness under the network
## profiles NETWORKS (each server on an emulated host; needs root), one report
NETWORKS ?= loopback,rtt=0,rack,az,az-lossy,region
NETWORK_CONTENDERS ?= monolock,monolock-warm,monolock-tfo,redis,redlock,etcd,zookeeper
bench-network: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench run --quick --backend local --networks $(NETWORKS) \
		--scenarios latency,throughput,handover,fairness --contenders $(NETWORK_CONTENDERS) $(BENCH_ARGS)

## chaos: the chaos scenario alone; DURATION=30m scales its fault schedule to about that long
## per contender: the contenders run it one after another (all 8 locks at 30m: about 4 h);
## pick some with BENCH_ARGS="--contenders monolock,etcd"
DURATION ?=
chaos: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench run --scenarios chaos $(if $(DURATION),--chaos-duration $(DURATION)) $(BENCH_ARGS)

## bench-chaos: the chaos soak into reports/<run-id>/: every lock that has a chaos
## step under one seeded schedule of SOAK_FAULTS faults of the kinds every lock
## takes (30 each of client pause, host loss, partition, server kill, server
## pause) plus 27 clock steps, which only the locks with a movable wall clock
## take (the others record them as skipped): 0 violations in 150 bound a rate
## below 2.5% (Wilson 95%). Cadence, measured on containers (2 cores, loaded
## by other work): a fault every 2.5-2.6 s of schedule at the 2 s lease, and
## a step its span plus 1-3 s (35 faults: 87-88 s; 89 faults: 233-234 s), so
## 177 faults take about 7.7 min a step. SOAK_PARALLEL lanes run side by
## side, locks sharing a server role in one lane: the Redis lane (redis,
## redisson, redisson-fair) is the longest, 3 steps, then the PgBouncer lane
## (postgres-pgbouncer, postgres-pgbouncer-xact: their pair is one server),
## 2 steps, beside 6 locks of their own: 11 steps, 4 on the busiest of 3
## lanes, about 31 min planned (TestSoakPlanBudget; 9 locks took 23m46s).
## Side by side the clients used 0.7-1.4% of a core per lock and the servers
## 0-2.6% (the report's CPU table), so the lanes do not starve each other.
SOAK_FAULTS   ?= 150
SOAK_PARALLEL ?= 3
bench-chaos: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench run --scenarios chaos --floors=false \
		--chaos-faults $(SOAK_FAULTS) --chaos-parallel $(SOAK_PARALLEL) $(BENCH_ARGS)

## images: build the Docker images (reused when their content is unchanged)
images: redis-server postgresql zookeeper cc
	$(GO) run ./cmd/monolock-bench images build

## cluster: a single-node Kubernetes cluster on this machine (needs root), for the
## kubernetes backend: builds Kubernetes from the Go module proxy into the user cache
## dir the first time (15-25 min on two cores), then starts in about 15 s; prints
## the KUBECONFIG to export. An up cluster is reused. State: /var/lib/monolock-bench/kubernetes
cluster: cc cni-plugins
	$(GO) run ./cmd/monolock-bench cluster up

## cluster-down: stop that cluster and remove everything it made (processes, mounts,
## the pods' bridge, iptables rules, cgroups; the host's sysctls put back)
cluster-down:
	$(GO) run ./cmd/monolock-bench cluster down

## test-kubernetes: the kubernetes backend's tests against that cluster (started
## first, left up): servers as pods, faults through the API, the handover and safety holders
## in client pods, worker pods (about two minutes once the cluster runs)
test-kubernetes: cluster
	$(GO) test -race -count=1 -timeout 20m -run 'Kubernetes|Cluster|Agent|Merge' \
		./bench/backend/kubernetes/... ./bench/contenders/monolock/ ./bench/load/shard/ ./bench/scenarios/

## lint: gofmt, go vet, staticcheck
lint:
	@unformatted="$$(gofmt -l .)"; if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

## fuzz: every fuzz target for FUZZTIME (default 10s) each
fuzz:
	@set -e; \
	targets="$$($(GO) test -list '^Fuzz' ./... | awk '/^Fuzz/ { f[n++] = $$1; next } /^ok / { for (i = 0; i < n; i++) print $$2 "," f[i]; n = 0 }')"; \
	if [ -z "$$targets" ]; then echo "no fuzz targets"; exit 1; fi; \
	for t in $$targets; do \
		pkg="$${t%%,*}"; fn="$${t##*,}"; \
		echo "fuzz $$pkg $$fn for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) "$$pkg"; \
	done

## clean: bin/ and every container, network and image the project created (by label)
clean:
	rm -rf bin/
	$(GO) run ./cmd/monolock-bench images clean

# redis-server is needed by the local backend, the Redis tests and the
# offline Redis image. Installed with apt-get when possible, else explained.
redis-server:
	@if ! command -v redis-server >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing redis-server with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq redis-server >/dev/null; \
		else \
			echo "redis-server is missing: install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis)," >&2; \
			echo "or set MONOLOCK_BENCH_REDIS_IMAGE to a Redis image the Docker engine has." >&2; \
			exit 1; \
		fi; \
	fi

# The CNI plugins (bridge, host-local, loopback) of the local Kubernetes
# cluster's pod network: Debian's containernetworking-plugins.
cni-plugins:
	@if ! [ -x /usr/lib/cni/bridge ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing containernetworking-plugins with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq containernetworking-plugins >/dev/null; \
		else \
			echo "the CNI plugins are missing: install them (Debian/Ubuntu: sudo apt-get install -y containernetworking-plugins)" >&2; \
			exit 1; \
		fi; \
	fi

# postgresql (the server: postgres and initdb) is needed by the local
# backend, the PostgreSQL tests and the PostgreSQL image, which packages
# the host's server. Found on PATH or in Debian's /usr/lib/postgresql/<major>/bin.
# pgbouncer (Debian's package: /usr/sbin/pgbouncer) runs in front of it for
# the postgres-pgbouncer contenders, locally and in their image.
postgresql:
	@if ! command -v postgres >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing postgresql with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq postgresql >/dev/null; \
		else \
			echo "the PostgreSQL server is missing: install it (Debian/Ubuntu: sudo apt-get install -y postgresql)," >&2; \
			echo "so that /usr/lib/postgresql/<major>/bin holds postgres and initdb." >&2; \
			exit 1; \
		fi; \
	fi
	@if ! command -v pgbouncer >/dev/null 2>&1 && ! [ -x /usr/sbin/pgbouncer ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing pgbouncer with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq pgbouncer >/dev/null; \
		else \
			echo "PgBouncer is missing: install it (Debian/Ubuntu: sudo apt-get install -y pgbouncer)." >&2; \
			exit 1; \
		fi; \
	fi

# zookeeper (libzookeeper-java, the library part of Debian's zookeeper
# package, and the default headless Java runtime) is needed by the local
# backend, the ZooKeeper tests and the ZooKeeper image, which packages the
# host's jars and runtime.
zookeeper:
	@if ! [ -e /usr/share/java/zookeeper.jar ] || ! [ -x /usr/lib/jvm/default-java/bin/java ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing libzookeeper-java and default-jre-headless with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq libzookeeper-java default-jre-headless >/dev/null; \
		else \
			echo "ZooKeeper is missing: install it (Debian/Ubuntu: sudo apt-get install -y libzookeeper-java default-jre-headless)," >&2; \
			echo "so that /usr/share/java/zookeeper.jar and /usr/lib/jvm/default-java/bin/java exist." >&2; \
			exit 1; \
		fi; \
	fi

# A C compiler builds the clock-jump interposer (docker/clockshift) for the
# safety scenario, on the host for the local backend and for the image.
cc:
	@if ! command -v cc >/dev/null 2>&1 || ! [ -e /usr/include/stdio.h ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing gcc and libc6-dev with apt-get"; \
			export DEBIAN_FRONTEND=noninteractive; \
			apt-get -o DPkg::Lock::Timeout=300 update -qq && \
			apt-get -o DPkg::Lock::Timeout=300 install -y -qq gcc libc6-dev >/dev/null; \
		else \
			echo "a C compiler is missing: install one (Debian/Ubuntu: sudo apt-get install -y gcc libc6-dev)." >&2; \
			exit 1; \
		fi; \
	fi
