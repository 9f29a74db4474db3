package etcd

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
	"github.com/monolock/monolock-bench/bench/benchtest"
)

// TestContainerCluster builds the image and runs a three-member cluster
// in containers on one session network, members finding each other by
// container name, then the mutual-exclusion check through it.
func TestContainerCluster(t *testing.T) {
	benchtest.RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	img, err := Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %s (%s, built %v)", img.Ref, img.Source, img.Built)
	again, err := Image(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Ref != img.Ref || again.Built {
		t.Errorf("second Image call: %+v, want %s reused", again, img.Ref)
	}

	s, err := engine.NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("session close: %v", err)
		}
	})

	cluster := make([]Member, 3)
	for i := range cluster {
		name := "etcd-" + strconv.Itoa(i)
		host := s.Network + "-" + name // the container's name, resolved on the network
		cluster[i] = Member{
			Name:            name,
			ClientURL:       "http://" + host + ":" + strconv.Itoa(ClientPort),
			PeerURL:         "http://" + host + ":" + strconv.Itoa(PeerPort),
			ListenClientURL: "http://0.0.0.0:" + strconv.Itoa(ClientPort),
			ListenPeerURL:   "http://0.0.0.0:" + strconv.Itoa(PeerPort),
		}
	}
	ctrs := make([]*engine.Container, len(cluster))
	errs := make([]error, len(cluster))
	var wg sync.WaitGroup
	for i, m := range cluster {
		wg.Go(func() {
			ctrs[i], errs[i] = s.Start(ctx, engine.Spec{
				Name:  m.Name,
				Image: engine.Image(img),
				Cmd:   MemberArgs(m, cluster, "/data/member"),
				Port:  ClientPort,
				Ports: []int{PeerPort},
			})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	endpoints := make([]string, len(ctrs))
	for i, c := range ctrs {
		endpoints[i] = c.Addr()
	}
	if err := WaitHealthy(ctx, endpoints); err != nil {
		for _, c := range ctrs {
			logs, _ := c.Logs(ctx)
			t.Logf("%s: %s", c.Name, logs)
		}
		t.Fatal(err)
	}
	l := newLocker(t, endpoints, time.Second)
	benchtest.MutualExclusion(t, l, "container", 4, 10, 2*time.Minute)
	if _, err := ReadCounts(ctx, endpoints); err != nil {
		t.Error(err)
	}
}
