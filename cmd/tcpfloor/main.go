// Command tcpfloor is the tcp-floor baseline server of the benchmark: the
// least a connection-per-claim lock server can do. Per connection it reads
// one 12-byte frame — a monolock ACQUIRE with a 4-byte name (1 type +
// 1 version + 4 lease_ms + 2 name_len + 4 name) — without validating it,
// answers with one 9-byte ACQUIRED frame, and waits for the client to close
// the connection. It keeps no lock table: it measures TCP connect, one
// round trip and close, nothing else.
//
// Flags (each with an environment variable; flag beats env beats default):
//
//	-listen  TCPFLOOR_LISTEN_ADDRESS  default 0.0.0.0:7071
//
// SIGTERM or SIGINT closes the listener and exits. The binary imports the
// Go standard library and monolock/protocol (itself standard library only),
// so it builds into the same kind of static image as the monolock server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// FrameLen is the size of the one frame a client sends: an ACQUIRE with a
// NameLen-byte name.
const (
	NameLen  = 4
	FrameLen = 1 + 1 + 4 + 2 + NameLen
)

// readTimeout bounds the wait for the client's frame, so a stuck peer ends
// its own connection. Waiting for the close afterwards is unbounded, like a
// held lock.
const readTimeout = 5 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, os.Args[1:], log); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		log.Error("tcpfloor: exiting", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("tcpfloor", flag.ContinueOnError)
	def := "0.0.0.0:7071"
	if v := os.Getenv("TCPFLOOR_LISTEN_ADDRESS"); v != "" {
		def = v
	}
	listen := fs.String("listen", def, "listen address (env TCPFLOOR_LISTEN_ADDRESS)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raiseOpenFileLimit(log)
	// As cmd/monolock listens: no TCP keep-alive on accepted connections,
	// so that the floor pays the same system calls per connection.
	l, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", *listen)
	if err != nil {
		return fmt.Errorf("tcpfloor: listen: %w", err)
	}
	log.Info("tcpfloor: listening", "addr", l.Addr().String())
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	return serve(ctx, l, log)
}

// serve accepts until l is closed; temporary accept errors (EMFILE and
// friends) back off 5ms → 1s, as net/http does.
func serve(ctx context.Context, l net.Listener, log *slog.Logger) error {
	var token atomic.Uint64
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			log.Warn("tcpfloor: accept", "err", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		go handle(c, token.Add(1))
	}
}

func handle(c net.Conn, token uint64) {
	defer c.Close()
	var in [FrameLen]byte
	_ = c.SetReadDeadline(time.Now().Add(readTimeout))
	if _, err := io.ReadFull(c, in[:]); err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	out := protocol.AppendAcquired(make([]byte, 0, protocol.AcquiredLen), token)
	if _, err := c.Write(out); err != nil {
		return
	}
	// Hold until the client closes: the close is the release.
	_, _ = io.Copy(io.Discard, c)
}

// raiseOpenFileLimit raises the soft NOFILE limit to the hard limit, as the
// monolock server does, so both floors of capacity are the same.
func raiseOpenFileLimit(log *slog.Logger) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur >= r.Max {
		return
	}
	r.Cur = r.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		log.Warn("tcpfloor: could not raise the open-file limit", "err", err)
	}
}
