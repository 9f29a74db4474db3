package redissonlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/monolock/monolock-bench/bench/benchtest"
	"github.com/monolock/monolock-bench/bench/faults/faultproxy"
	"github.com/monolock/monolock-bench/redisbench"
)

// TestNothingWaitsForARedial: while the subscription connection redials
// a server that does not answer (a restart, a lost network), the
// client's threads that join or leave a subscription, and the message
// loop, do not wait for the redial; once the server answers again, the
// thread still waiting is woken by the unlock message. Each redial here
// waits out a read timeout of redialBound, far longer than the bound on
// joining and leaving: a SUBSCRIBE sent under the lock those need (as
// before) fails the test.
func TestNothingWaitsForARedial(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out redials of a real Redis: not under -short (make test runs it)")
	}
	servers := benchtest.Start(t, redisbench.Server).Servers(redisbench.Server.Name)
	addr := servers[0].Addr()
	proxy := faultproxy.New()
	defer proxy.Close()
	link, err := proxy.Link("subscriptions", addr)
	if err != nil {
		t.Fatal(err)
	}
	const redialBound = 10 * time.Second // a redial's unanswered handshake
	const promptly = 3 * time.Second     // joining or leaving: no network
	rc := redisbench.NewClientWith(link.Addr(), 2, redisbench.Timeouts{Read: redialBound, Write: redialBound})
	defer rc.Close()
	direct := redis.NewClient(&redis.Options{Addr: addr})
	defer direct.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	p := newPubSub(rc)
	defer p.close()
	first, err := p.subscribe("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.await(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.e.ready:
	default:
		t.Fatal("SUBSCRIBE a not confirmed within a minute")
	}
	waiter, err := p.subscribe("a")
	if err != nil {
		t.Fatal(err)
	}

	// The server stops answering and the connection breaks: every redial
	// connects, then waits redialBound for the handshake's answer.
	if err := link.Blackhole(); err != nil {
		t.Fatal(err)
	}
	if err := link.Reset(); err != nil {
		t.Fatal(err)
	}
	joined := make(chan *subscription, 1)
	go func() {
		b, err := p.subscribe("b") // a new channel: a SUBSCRIBE to send
		if err != nil {
			t.Error(err)
		}
		first.close() // a thread that leaves
		third, err := p.subscribe("a")
		if err != nil {
			t.Error(err)
		}
		third.close()
		joined <- b
	}()
	var b *subscription
	select {
	case b = <-joined:
	case <-time.After(promptly):
		t.Fatalf("joining and leaving subscriptions took over %v while the connection redialled", promptly)
	}
	// The message loop is not held up either: it takes the lock to
	// release the threads awaiting a confirmation the lost connection
	// took with it.
	p.lost()

	// The server answers again: the connection comes back with its
	// channels, and the unlock message wakes the waiting thread.
	if err := link.Restore(); err != nil {
		t.Fatal(err)
	}
	if err := link.Reset(); err != nil { // ends a handshake still waiting
		t.Fatal(err)
	}
	for {
		n, err := direct.PubSubNumSub(ctx, "a").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n["a"] == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the subscription to a did not come back")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := direct.Publish(ctx, "a", UnlockMessage).Err(); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, redialBound)
	defer wcancel()
	if err := waiter.wait(wctx, -1); err != nil {
		t.Fatalf("the waiting thread was not woken by the unlock message: %v", err)
	}
	waiter.close()
	// b's SUBSCRIBE was sent on the new connection, or failed while the
	// server did not answer: either way its thread goes on.
	if err := b.await(ctx, time.Minute); err != nil {
		t.Logf("SUBSCRIBE b: %v", err)
	}
	b.close()
}
