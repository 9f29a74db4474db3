package monolock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"time"

	"github.com/monolock/monolock-bench/monolock"
	"github.com/monolock/monolock-bench/monolock/protocol"
	"github.com/monolock/monolock-bench/monolock/server"
)

// startServer runs an in-process server on loopback for the examples: what
// monolocktest.NewServer does for tests, which needs a testing.TB that an
// Example does not have.
func startServer() (addr string, stop func()) {
	srv, err := server.New(server.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)
	return ln.Addr().String(), func() { srv.Close() }
}

func ExampleClient_Do() {
	addr, stop := startServer()
	defer stop()

	c := monolock.New(monolock.Config{Address: addr})
	err := c.Do(context.Background(), "jobs/nightly", 10*time.Second, func(ctx context.Context, token uint64) error {
		// Only one process runs this at a time. Pass token to the resource,
		// which rejects tokens lower than the highest it has seen, and stop
		// when ctx is cancelled: ownership is then no longer confirmed.
		fmt.Println("running the nightly job; fencing token issued:", token > 0)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output: running the nightly job; fencing token issued: true
}

func ExampleClient_Acquire() {
	addr, stop := startServer()
	defer stop()

	c := monolock.New(monolock.Config{Address: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // bounds the wait only
	defer cancel()
	first, err := c.Acquire(ctx, "deploy", 5*time.Second)
	if err != nil {
		log.Fatal(err)
	}

	// A second claim queues behind the first and is promoted by a push
	// from the server the moment the first is released.
	second := make(chan *monolock.Lock)
	go func() {
		l, err := c.Acquire(ctx, "deploy", 5*time.Second)
		if err != nil {
			log.Fatal(err)
		}
		second <- l
	}()
	time.Sleep(50 * time.Millisecond) // let it queue
	if err := first.Release(); err != nil {
		log.Fatal("lost before release: ", err)
	}
	l := <-second
	defer l.Release()
	fmt.Println("second token above first:", l.Token() > first.Token())
	// Output: second token above first: true
}

func ExampleLock_Done() {
	addr, stop := startServer()
	c := monolock.New(monolock.Config{Address: addr})
	l, err := c.Acquire(context.Background(), "leader", 2*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release()

	stop() // the server goes away: ownership can no longer be confirmed
	<-l.Done()
	fmt.Println("lost:", errors.Is(l.Err(), monolock.ErrConnectionClosed))
	// Output: lost: true
}

func ExampleServerError() {
	// What an ERROR frame from the server looks like to a caller; codes
	// below 0x10 are server conditions worth retrying, unknown ones too.
	for _, err := range []error{
		&monolock.ServerError{Code: protocol.CodeClosedByAdmin, Reason: "force-release"},
		&monolock.ServerError{Code: protocol.CodeNotAuthorized},
		&monolock.ServerError{Code: 0x07},
	} {
		var se *monolock.ServerError
		errors.As(err, &se)
		fmt.Printf("%v | temporary=%v admin=%v\n", err, se.Temporary(), errors.Is(err, protocol.ErrClosedByAdmin))
	}
	// Output:
	// monolock: server error 0x02: force-release | temporary=true admin=true
	// monolock: server error 0x18: not authorized for lock | temporary=false admin=false
	// monolock: server error 0x07: unknown server condition 0x07 | temporary=true admin=false
}

func ExampleClient_DoRetry() {
	addr, stop := startServer()
	defer stop()

	c := monolock.New(monolock.Config{Address: addr})
	// DoRetry reconnects through server restarts and network failures
	// until ctx ends, but never runs fn twice.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.DoRetry(ctx, "reports/rebuild", 5*time.Second, func(ctx context.Context, token uint64) error {
		fmt.Println("rebuilding reports")
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// rebuilding reports
	// err: <nil>
}
