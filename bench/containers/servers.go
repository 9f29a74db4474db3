package containers

import (
	"context"
	"strconv"
)

// Ports of the servers inside their containers.
const (
	RedisPort       = 6379
	MonolockPort    = 7070
	MonolockOpsPort = 9090
	TCPFloorPort    = 7071
)

// MonolockImage builds (or reuses) the monolock server image from
// ./cmd/monolock: BuildGoImage(ctx, "./cmd/monolock", "monolock").
func MonolockImage(ctx context.Context) (Image, error) {
	return BuildGoImage(ctx, "./cmd/monolock", "monolock")
}

// TCPFloorImage builds (or reuses) the tcp-floor baseline server image
// from ./cmd/tcpfloor: BuildGoImage(ctx, "./cmd/tcpfloor", "tcp-floor").
func TCPFloorImage(ctx context.Context) (Image, error) {
	return BuildGoImage(ctx, "./cmd/tcpfloor", "tcp-floor")
}

// redisCmd runs Redis as a lock server: reachable from the bench (the
// default "protected mode" refuses non-loopback clients without a
// password) and with persistence off, since nothing must survive a
// restart and disk writes would add noise.
var redisCmd = []string{"redis-server", "--port", strconv.Itoa(RedisPort), "--protected-mode", "no", "--save", "", "--appendonly", "no"}

// StartRedis starts a Redis server from img (see RedisImage), ready once
// it answers PING. args are appended to the redis-server command line.
func (s *Session) StartRedis(ctx context.Context, img Image, name string, args ...string) (*Container, error) {
	return s.Start(ctx, Spec{
		Name:  name,
		Image: img,
		Cmd:   append(append([]string(nil), redisCmd...), args...),
		Port:  RedisPort,
		Ready: RedisReady,
	})
}

// StartMonolock starts a monolock server from img (see BuildGoImage with
// "./cmd/monolock") listening on MonolockPort, with its ops HTTP server on
// MonolockOpsPort (AddrOf(MonolockOpsPort) for /metrics); ready once
// /healthz answers 200. args are appended to the server's flags.
func (s *Session) StartMonolock(ctx context.Context, img Image, name string, args ...string) (*Container, error) {
	cmd := []string{
		"-listen", "0.0.0.0:" + strconv.Itoa(MonolockPort),
		"-ops-listen", "0.0.0.0:" + strconv.Itoa(MonolockOpsPort),
	}
	return s.Start(ctx, Spec{
		Name:  name,
		Image: img,
		Cmd:   append(cmd, args...),
		Port:  MonolockPort,
		Ports: []int{MonolockOpsPort},
		Ready: HTTPReady(MonolockOpsPort, "/healthz"),
	})
}

// StartTCPFloor starts the tcp-floor baseline server from img (see
// BuildGoImage with "./cmd/tcpfloor") on TCPFloorPort, ready once it
// accepts connections. args are appended to its flags.
func (s *Session) StartTCPFloor(ctx context.Context, img Image, name string, args ...string) (*Container, error) {
	return s.Start(ctx, Spec{
		Name:  name,
		Image: img,
		Cmd:   append([]string{"-listen", "0.0.0.0:" + strconv.Itoa(TCPFloorPort)}, args...),
		Port:  TCPFloorPort,
		Ready: TCPReady,
	})
}
