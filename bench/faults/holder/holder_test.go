package holder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	monolockclient "github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// childEnv marks the test binary re-executed as a holder child.
const childEnv = "MONOLOCK_BENCH_HOLDER_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		if err := Main(context.Background(), os.Args[1:], []bench.Contender{monolock.Contender()}, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func command(t *testing.T) Command {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Command{Path: exe, Env: append(os.Environ(), childEnv+"=1")}
}

// reaped fails t unless the process pid is gone: exited and waited for, so
// not even a zombie is left.
func reaped(t *testing.T, pid int) {
	t.Helper()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("holder process %d still exists after Close (stat: %v)", pid, err)
	}
}

// TestStop stops a holder each way and checks that another client gets the
// lock afterwards (at once for release and kill, after the lease for a
// freeze) and that Close reaps the child.
func TestStop(t *testing.T) {
	srv := monolocktest.NewServer(t)
	// Long enough that a loaded machine (a release crossing the pipe
	// into a descheduled child took 1.75s at load ~15) still hands over
	// within lease/2 after a release or kill, which an expiry could not
	// (it comes at least 3/4 of a lease after the last heartbeat, sent every lease/4), and
	// that the child keeps its lock while descheduled before the stop.
	const lease = 2 * time.Second
	tests := []struct {
		name string
		stop func(*Process) error
		// within bounds the other client's wait after the stop.
		within time.Duration
	}{
		{"release", (*Process).Release, lease / 2},
		{"kill", (*Process).Kill, lease / 2},
		{"freeze", (*Process).Freeze, 3 * lease},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			key := "holder-" + tt.name
			p, err := Start(ctx, command(t), Spec{Contender: "monolock", Addrs: []string{srv.Addr}, Lease: lease, Key: key})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if tok, ok := p.Token(); !ok || tok == 0 {
				t.Errorf("Token() = %d, %v; want a monolock fencing token", tok, ok)
			}
			l := monolock.New(monolockclient.Config{Address: srv.Addr}, lease)
			// While the child holds the lock, nobody else gets it.
			short, cancelShort := context.WithTimeout(ctx, lease)
			if _, err := l.Acquire(short, key); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Acquire while the child holds the lock = %v, want a deadline", err)
			}
			cancelShort()

			if err := tt.stop(p); err != nil {
				t.Fatal(err)
			}
			begin := time.Now()
			h, err := l.Acquire(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(begin); d > tt.within {
				t.Errorf("granted %v after the %s, want within %v", d, tt.name, tt.within)
			}
			if tt.name == "release" {
				if err := p.Released(ctx); err != nil {
					t.Errorf("Released = %v", err)
				}
			}
			h.Release(ctx)
			p.Close()
			reaped(t, p.Pid())
		})
	}
}

func TestStartFails(t *testing.T) {
	srv := monolocktest.NewServer(t)
	tests := []struct {
		name string
		spec Spec
	}{
		{"unknown contender", Spec{Contender: "nope", Addrs: []string{srv.Addr}, Lease: time.Second, Key: "k"}},
		{"server down", Spec{Contender: "monolock", Addrs: []string{"127.0.0.1:1"}, Lease: time.Second, Key: "k"}},
		{"no lease", Spec{Contender: "monolock", Addrs: []string{srv.Addr}, Key: "k"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			p, err := Start(ctx, command(t), tt.spec)
			if err == nil {
				p.Close()
				t.Fatal("Start succeeded, want an error")
			}
			if ctx.Err() != nil {
				t.Fatalf("Start waited until the deadline: %v", err)
			}
		})
	}
}
