package redisbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/containers/engine"
)

// TestClockShiftRedis makes one Redis container's clock jump: a key set
// with PX 10000 is gone as soon as the server's clock steps 20 s forward,
// and a second SET NX succeeds, while the host's clock stays put.
func TestClockShiftRedis(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := engine.NewSession(ctx)
	if errors.Is(err, engine.ErrNoEngine) && os.Getenv("CI") == "" {
		t.Skip("no Docker engine answers:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	img, err := engine.ClockShiftImage(ctx, engine.ProgramImage{Executable: Server.Executable, HostDockerfile: Server.HostDockerfile})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Start(ctx, engine.Spec{
		Name: "redis-clockshift", Image: img, Port: Server.Port,
		Cmd: append([]string{Server.Executable}, Server.Args(bench.ServerArgs{Listen: fmt.Sprintf("0.0.0.0:%d", Server.Port)})...),
	})
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: c.Addr()})
	defer rdb.Close()

	serverAhead := func() time.Duration {
		t.Helper()
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return time.Until(now)
	}
	// Generous: the container shares the host's clock, only the shift
	// moves it.
	const slack = 5 * time.Second
	if d := serverAhead(); d < -slack || d > slack {
		t.Fatalf("unshifted server clock is %s off the host's", d)
	}
	if ok, err := rdb.SetNX(ctx, "lock", "A", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("first SET NX: %v %v", ok, err)
	}
	if err := c.ShiftClock(ctx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "lock").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS right after a +20s jump: %d %v, want the key gone", n, err)
	}
	if ok, err := rdb.SetNX(ctx, "lock", "B", 10*time.Second).Result(); err != nil || !ok {
		t.Fatalf("second SET NX after the jump: %v %v, want granted", ok, err)
	}
	if d := serverAhead(); d < 20*time.Second-slack || d > 20*time.Second+slack {
		t.Errorf("server clock after the jump is %s ahead, want about 20s", d)
	}
	// Back to the host's time: the second key, set at +20s with 10s to
	// live, now has about 30s left.
	if err := c.ShiftClock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.PTTL(ctx, "lock").Result(); err != nil || ttl < 20*time.Second {
		t.Errorf("PTTL after shifting back: %s %v, want about 30s", ttl, err)
	}
}
