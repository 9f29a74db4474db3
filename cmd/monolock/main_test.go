package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunServesAndShutsDownOnSignal runs the program in-process; cancelling
// ctx stands for SIGTERM.
func TestRunServesAndShutsDownOnSignal(t *testing.T) {
	addr, ops := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	exit := make(chan int, 1)
	env := map[string]string{"MONOLOCK_LOG_FORMAT": "json", "MONOLOCK_OPS_LISTEN_ADDRESS": ops}
	go func() {
		exit <- run(ctx, func() {}, []string{"-listen", addr, "-io-timeout", "1s", "-log-level", "debug"}, func(k string) string { return env[k] }, io.Discard, &stderr)
	}()

	healthz := func() int {
		resp, err := http.Get("http://" + ops + "/healthz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(5 * time.Second)
	for healthz() != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("never healthy; log:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write(protocol.AppendAcquire(nil, 10_000, "cmd"))
	if f, err := protocol.ReadServerFrame(c); err != nil || f.Type != protocol.TypeAcquired {
		t.Fatalf("acquire: %+v, %v", f, err)
	}

	cancel()
	f, err := protocol.ReadServerFrame(c)
	if err != nil || f.Type != protocol.TypeError || f.Code != protocol.CodeShuttingDown {
		t.Fatalf("on shutdown: %+v, %v", f, err)
	}
	c.Close()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d; log:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit")
	}
	for _, want := range []string{`"msg":"monolock: listening"`, `"msg":"monolock: shutting down"`, `"msg":"monolock: stopped"`, `"level":"DEBUG"`} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, stderr.String())
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"help", []string{"-h"}, 0},
		{"version", []string{"-version"}, 0},
		{"bad setting", []string{"-io-timeout=x"}, 2},
		{"listen fails", []string{"-listen", busy.Addr().String()}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(context.Background(), func() {}, tt.args, func(string) string { return "" }, io.Discard, io.Discard); got != tt.want {
				t.Errorf("exit %d, want %d", got, tt.want)
			}
		})
	}
}
