package etcd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/monolock/monolock-bench/bench/backend/local"
)

// LocalCluster is a cluster of etcd child processes on 127.0.0.1.
type LocalCluster struct {
	// Members are the processes, in member order; Process.Addr is the
	// member's client host:port.
	Members []*local.Process
}

// Endpoints returns the members' client host:port addresses.
func (c *LocalCluster) Endpoints() []string {
	eps := make([]string, len(c.Members))
	for i, p := range c.Members {
		eps[i] = p.Addr()
	}
	return eps
}

// Stop stops every member. Safe to call twice.
func (c *LocalCluster) Stop() {
	var wg sync.WaitGroup
	for _, p := range c.Members {
		wg.Go(func() { p.Stop(context.Background()) })
	}
	wg.Wait()
}

// StartLocalCluster starts an n-member cluster of the etcd server at bin
// (see BuildServer) as child processes on free 127.0.0.1 ports, with data
// directories under dir, and waits until every member reports healthy
// (WaitHealthy). The members start concurrently: none can be healthy
// before a quorum runs. On error nothing is left running.
func StartLocalCluster(ctx context.Context, bin, dir string, n int) (*LocalCluster, error) {
	if n < 1 {
		return nil, fmt.Errorf("etcd: a cluster needs at least one member, not %d", n)
	}
	cluster := make([]Member, n)
	for i := range cluster {
		client, err := local.FreeAddr()
		if err != nil {
			return nil, err
		}
		peer, err := local.FreeAddr()
		if err != nil {
			return nil, err
		}
		cluster[i] = Member{Name: "etcd-" + strconv.Itoa(i), ClientURL: "http://" + client, PeerURL: "http://" + peer}
	}
	c := &LocalCluster{Members: make([]*local.Process, n)}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, m := range cluster {
		wg.Go(func() {
			addr := strings.TrimPrefix(m.ClientURL, "http://")
			c.Members[i], errs[i] = local.StartProcess(ctx, "etcd", addr, bin, MemberArgs(m, cluster, filepath.Join(dir, m.Name))...)
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		err = WaitHealthy(ctx, c.Endpoints())
	}
	if err != nil {
		for _, p := range c.Members {
			if p != nil {
				p.Stop(context.Background())
			}
		}
		return nil, err
	}
	return c, nil
}
