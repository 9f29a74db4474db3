// Package containerbackend is the containers backend of the bench: it
// implements bench.Deployment over bench/containers, with one monolock
// container, one Redis, five Redis masters for Redlock and one tcp-floor
// container, all on one session network and reached the same way (the
// container IP without docker-proxy where the host routes to it).
package containerbackend

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/containers"
	"github.com/monolock/monolock-bench/bench/results"
)

// redlockMasters is the number of independent Redis masters behind the
// redlock role.
const redlockMasters = 5

// closeTimeout bounds the removal of the session's containers.
const closeTimeout = time.Minute

// Deployment is one container session. Its methods are safe for concurrent
// use.
type Deployment struct {
	session    *containers.Session
	mu         sync.Mutex
	containers map[string][]*containers.Container
	images     []results.Image
	engine     string
	closeOnce  sync.Once
	closeErr   error
}

// Start builds (or reuses, by content hash) the images the roles need and
// starts their containers. On error everything started is removed again.
func Start(ctx context.Context, roles []string) (_ *Deployment, err error) {
	s, err := containers.NewSession(ctx)
	if err != nil {
		return nil, err
	}
	d := &Deployment{session: s, containers: map[string][]*containers.Container{}}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if d.engine, err = s.EngineVersion(ctx); err != nil {
		return nil, err
	}
	var redisImg *containers.Image
	redisImage := func() (containers.Image, error) {
		if redisImg != nil {
			return *redisImg, nil
		}
		img, err := containers.RedisImage(ctx)
		if err != nil {
			return img, err
		}
		redisImg = &img
		d.images = append(d.images, results.Image{Role: "redis", Ref: img.Ref, Source: img.Source})
		return img, nil
	}
	for _, role := range roles {
		var cs []*containers.Container
		switch role {
		case bench.RoleMonolock:
			img, err := containers.MonolockImage(ctx)
			if err != nil {
				return nil, err
			}
			d.images = append(d.images, results.Image{Role: role, Ref: img.Ref, Source: img.Source + ", static binary FROM scratch"})
			c, err := s.StartMonolock(ctx, img, "monolock")
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
		case bench.RoleTCPFloor:
			img, err := containers.TCPFloorImage(ctx)
			if err != nil {
				return nil, err
			}
			d.images = append(d.images, results.Image{Role: role, Ref: img.Ref, Source: img.Source + ", static binary FROM scratch"})
			c, err := s.StartTCPFloor(ctx, img, "tcp-floor")
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
		case bench.RoleRedis:
			img, err := redisImage()
			if err != nil {
				return nil, err
			}
			c, err := s.StartRedis(ctx, img, "redis")
			if err != nil {
				return nil, err
			}
			cs = append(cs, c)
		case bench.RoleRedlock:
			img, err := redisImage()
			if err != nil {
				return nil, err
			}
			for i := range redlockMasters {
				c, err := s.StartRedis(ctx, img, fmt.Sprintf("redlock-%d", i+1))
				if err != nil {
					return nil, err
				}
				cs = append(cs, c)
			}
		default:
			return nil, fmt.Errorf("containerbackend: unknown server role %q", role)
		}
		d.mu.Lock()
		d.containers[role] = cs
		d.mu.Unlock()
	}
	return d, nil
}

// Containers returns the containers of role, e.g. to kill one in a
// failover scenario.
func (d *Deployment) Containers(role string) []*containers.Container {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.containers[role]
}

// Addrs implements bench.Deployment. bench.RoleMonolockOps answers the ops
// HTTP address (/metrics) of the monolock container.
func (d *Deployment) Addrs(role string) []string {
	var addrs []string
	if role == bench.RoleMonolockOps {
		for _, c := range d.Containers(bench.RoleMonolock) {
			addrs = append(addrs, c.AddrOf(containers.MonolockOpsPort))
		}
		return addrs
	}
	for _, c := range d.Containers(role) {
		addrs = append(addrs, c.Addr())
	}
	return addrs
}

// ServerCPU implements bench.Deployment: the sum of the containers' CPU
// time from their cgroups. When the engine runs on this host the cgroup
// files are read directly (microseconds); otherwise the engine's stats API
// is asked, which costs about a second per container and call.
func (d *Deployment) ServerCPU(ctx context.Context, role string) (time.Duration, string, bool, error) {
	cs := d.Containers(role)
	if len(cs) == 0 {
		return 0, "", false, fmt.Errorf("%w %q", bench.ErrNoServers, role)
	}
	var sum time.Duration
	source := "cgroup " + cgroupSourceNote
	for _, c := range cs {
		cpu, err := cgroupCPU(c.ID)
		if err != nil {
			st, err := c.Stats(ctx)
			if err != nil {
				return 0, "", false, err
			}
			cpu, source = st.CPU, "container cgroup CPU usage (engine stats API)"
		}
		sum += cpu
	}
	return sum, source, true, nil
}

const cgroupSourceNote = "cpuacct.usage / cpu.stat usage_usec of the container, read on the host"

// cgroupCPU reads a container's CPU usage from the host's cgroup
// filesystem: cgroup v1 (cgroupfs or systemd driver) or v2.
func cgroupCPU(id string) (time.Duration, error) {
	for _, p := range []string{
		"/sys/fs/cgroup/cpuacct/docker/" + id + "/cpuacct.usage",
		"/sys/fs/cgroup/cpu,cpuacct/docker/" + id + "/cpuacct.usage",
		"/sys/fs/cgroup/cpuacct/system.slice/docker-" + id + ".scope/cpuacct.usage",
	} {
		if b, err := os.ReadFile(p); err == nil {
			ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("containerbackend: %s: %w", p, err)
			}
			return time.Duration(ns), nil
		}
	}
	for _, p := range []string{
		"/sys/fs/cgroup/system.slice/docker-" + id + ".scope/cpu.stat",
		"/sys/fs/cgroup/docker/" + id + "/cpu.stat",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("containerbackend: %s: %w", p, err)
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
	}
	return 0, fmt.Errorf("containerbackend: no cgroup CPU file for container %s on this host", id)
}

// Describe implements bench.Deployment.
func (d *Deployment) Describe(env *results.Environment) {
	env.Backend = "containers"
	env.NetworkPath = d.session.Path + " (network " + d.session.Network + ")"
	env.DockerVersion = d.engine
	d.mu.Lock()
	defer d.mu.Unlock()
	env.Images = append(env.Images, d.images...)
	for _, role := range []string{bench.RoleMonolock, bench.RoleRedis, bench.RoleRedlock, bench.RoleTCPFloor} {
		for _, c := range d.containers[role] {
			env.Servers = append(env.Servers, results.Server{Role: c.Name, Address: c.Addr()})
		}
	}
}

// Close removes every container and the network of the session, with its
// own timeout so that it also works after Ctrl-C. Safe to call twice.
func (d *Deployment) Close() error {
	d.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		d.closeErr = d.session.Close(ctx)
	})
	return d.closeErr
}
