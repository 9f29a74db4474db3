package redisbench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/docker"
)

// Masters is the number of independent Redis masters behind Redlock.
const Masters = 5

// Redis server specs: Server is the one Redis of the redis contenders and
// the redis-floor; RedlockMasters are the independent masters of Redlock.
var (
	Server         = redisSpec("redis", 1, "redis")
	RedlockMasters = redisSpec("redlock", Masters, "redlock")
)

// Where the containers backend finds a Redis image: the image named by
// ImageEnv, else RegistryImage, else the host's redis-server packaged.
const (
	ImageEnv      = "MONOLOCK_BENCH_REDIS_IMAGE"
	RegistryImage = "redis:7"
)

func redisSpec(name string, replicas int, flag string) *bench.ServerSpec {
	return &bench.ServerSpec{
		Name: name, Replicas: replicas, Flag: flag,
		Executable:     "redis-server",
		ImageEnv:       ImageEnv,
		RegistryImage:  RegistryImage,
		HostDockerfile: docker.HostRedis,
		Args:           serverArgs,
		Port:           6379,
		Ready:          ping,
		Version:        ServerVersion,
		// Redis 7 expires keys on the wall clock (gettimeofday).
		WallClockExpiry: true,
	}
}

// serverArgs run Redis as a lock server: reachable from the bench (the
// default protected mode refuses non-loopback clients without a password)
// and with persistence off, since a lock store needs none and a fork for a
// snapshot would add noise; logs to stdout at warning level. maxclients
// is raised from Redis's 10000 (Redis lowers it to what its open-file
// limit allows): in the scale scenario each Redisson waiter subscribes on
// a connection of its own, 10,000 at queue-10k beside the command pool.
func serverArgs(a bench.ServerArgs) []string {
	host, port, _ := net.SplitHostPort(a.Listen)
	args := []string{
		"--port", port, "--bind", host, "--protected-mode", "no",
		"--save", "", "--appendonly", "no", "--maxclients", strconv.Itoa(MaxClients),
		"--daemonize", "no", "--loglevel", "warning", "--logfile", "",
	}
	if a.Dir != "" {
		args = append(args, "--dir", a.Dir)
	}
	return args
}

// MaxClients is the maxclients every Redis is started with (see
// serverArgs).
const MaxClients = 100000

// pingTimeout bounds one readiness check.
const pingTimeout = time.Second

// ping succeeds once Redis at addr answers PING with PONG (and not with
// -LOADING or another error).
func ping(ctx context.Context, addr, _ string) error {
	d := net.Dialer{Timeout: pingTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(pingTimeout)); err != nil {
		return err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("redisbench: PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// ServerVersion returns redis_version from INFO server of the Redis at
// addr.
func ServerVersion(ctx context.Context, addr string) (string, error) {
	c := NewClientWith(addr, 1, probeTimeouts)
	defer c.Close()
	info, err := c.InfoMap(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("redisbench: INFO server at %s: %w", addr, err)
	}
	return info["Server"]["redis_version"], nil
}
