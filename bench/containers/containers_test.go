package containers

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// openSessions are closed by TestMain's signal handler, so that a Ctrl-C
// during the tests leaves no container or network behind.
var openSessions struct {
	sync.Mutex
	list []*Session
}

func TestMain(m *testing.M) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		openSessions.Lock()
		for _, s := range openSessions.list {
			_ = s.Close(ctx)
		}
		os.Exit(1)
	}()
	os.Exit(m.Run())
}

// requireDocker skips the test when no Docker engine answers, unless CI
// is set: CI must run these tests.
func requireDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := Ping(ctx); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("skipping container test: %v (CI is unset; with CI set this is a failure)", err)
		}
		t.Fatalf("CI is set but: %v", err)
	}
}

// newSession starts a session closed at the end of the test.
func newSession(t *testing.T) *Session {
	t.Helper()
	requireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := NewSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	openSessions.Lock()
	openSessions.list = append(openSessions.list, s)
	openSessions.Unlock()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("session close: %v", err)
		}
	})
	return s
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ping sends PING on conn and returns the reply line.
func ping(conn net.Conn, r *bufio.Reader, timeout time.Duration) (string, error) {
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func startRedis(t *testing.T, s *Session) *Container {
	t.Helper()
	ctx := testContext(t)
	img, err := RedisImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("redis image %s from %s", img.Ref, img.Source)
	c, err := s.StartRedis(ctx, img, "redis")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRedisContainerAnswersPONG(t *testing.T) {
	s := newSession(t)
	c := startRedis(t, s)
	if c.Path != s.Path {
		t.Errorf("container path %q, session path %q", c.Path, s.Path)
	}
	if s.Path == PathDirect {
		if host, _, _ := net.SplitHostPort(c.Addr()); host != c.IP.String() {
			t.Errorf("direct path but Addr %s is not the container IP %s", c.Addr(), c.IP)
		}
	}
	conn, err := net.DialTimeout("tcp", c.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if got, err := ping(conn, bufio.NewReader(conn), 5*time.Second); err != nil || got != "+PONG\r\n" {
		t.Fatalf("PING → %q, %v; want +PONG", got, err)
	}
}

func TestRedisContainerPauseKillRestart(t *testing.T) {
	s := newSession(t)
	c := startRedis(t, s)
	ctx := testContext(t)
	addr := c.Addr()

	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)

	// Frozen: the connection stays, but nothing answers until thawed.
	if err := c.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := ping(conn, r, 500*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("PING to a paused Redis → %q, %v; want a timeout", got, err)
	}
	if err := c.Unpause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ReadString('\n'); err != nil || got != "+PONG\r\n" {
		t.Fatalf("after unpause the pending PING → %q, %v; want +PONG", got, err)
	}

	// Killed: the connection ends; after a restart the same address serves.
	if err := c.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := ping(conn, r, 5*time.Second); err == nil {
		t.Fatalf("PING to a killed Redis → %q; want an error", got)
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Addr() != addr && s.Path == PathDirect {
		t.Errorf("address changed across restart: %s → %s", addr, c.Addr())
	}
	conn2, err := net.DialTimeout("tcp", c.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	if got, err := ping(conn2, bufio.NewReader(conn2), 5*time.Second); err != nil || got != "+PONG\r\n" {
		t.Fatalf("PING after restart → %q, %v; want +PONG", got, err)
	}

	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPU <= 0 || st.MemoryBytes == 0 {
		t.Errorf("stats of a running Redis = %+v; want CPU and memory above zero", st)
	}

	// A graceful stop ends the server too; Restart brings it back.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := RedisReady(ctx, c); err != nil {
		t.Fatalf("after stop and restart: %v", err)
	}
}

// echoImage builds testdata/echo; the second build must reuse the image.
func echoImage(t *testing.T) Image {
	t.Helper()
	ctx := testContext(t)
	img, err := BuildGoImage(ctx, "./bench/containers/testdata/echo", "containers-test-echo")
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildGoImage(ctx, "./bench/containers/testdata/echo", "containers-test-echo")
	if err != nil {
		t.Fatal(err)
	}
	if again.Ref != img.Ref || again.Built {
		t.Fatalf("second build = %+v; want a reuse of %s", again, img.Ref)
	}
	if img.Source != "build ./bench/containers/testdata/echo" {
		t.Errorf("Source = %q", img.Source)
	}
	return img
}

func echoRoundTrip(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	const msg = "hello through the container\n"
	if _, err := io.WriteString(conn, msg); err != nil {
		t.Fatal(err)
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || got != msg {
		t.Fatalf("echo → %q, %v; want %q", got, err, msg)
	}
}

func TestGoImageContainer(t *testing.T) {
	tests := []struct {
		name    string
		publish string
		want    string
	}{
		{name: "default", publish: "", want: ""},
		{name: "published ports forced", publish: "1", want: PathPublished},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(PublishEnv, tt.publish)
			s := newSession(t)
			if tt.want != "" && s.Path != tt.want {
				t.Fatalf("Path = %q, want %q", s.Path, tt.want)
			}
			img := echoImage(t)
			c, err := s.Start(testContext(t), Spec{Name: "echo", Image: img, Port: 8080})
			if err != nil {
				t.Fatal(err)
			}
			host, _, _ := net.SplitHostPort(c.Addr())
			if direct := host == c.IP.String(); direct != (s.Path == PathDirect) {
				t.Errorf("Addr %s with path %q", c.Addr(), s.Path)
			}
			echoRoundTrip(t, c.Addr())
		})
	}
}

func TestStartFailureLeavesNothing(t *testing.T) {
	s := newSession(t)
	img := echoImage(t)
	ctx := testContext(t)
	// A container that never gets ready is reported and removed.
	_, err := s.Start(ctx, Spec{Name: "broken", Image: img, Port: 8080, StartTimeout: 2 * time.Second,
		Ready: func(ctx context.Context, c *Container) error { return errors.New("never ready") }})
	if err == nil || !strings.Contains(err.Error(), "never ready") {
		t.Fatalf("Start = %v; want the readiness error", err)
	}
	assertNoContainers(t, s)
}

func TestSessionCloseRemovesContainersAndNetwork(t *testing.T) {
	s := newSession(t)
	img := echoImage(t)
	ctx := testContext(t)
	for _, name := range []string{"a", "b"} {
		if _, err := s.Start(ctx, Spec{Name: name, Image: img, Port: 8080}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(ctx, Spec{Name: "late", Image: img, Port: 8080}); !errors.Is(err, ErrSessionClosed) {
		t.Fatalf("Start after Close = %v; want ErrSessionClosed", err)
	}
	assertNoContainers(t, s)
	p, err := newProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	nets, err := p.Client().NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelSession+"="+s.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(nets.Items) != 0 {
		t.Errorf("networks left after Close: %d", len(nets.Items))
	}
}

func assertNoContainers(t *testing.T, s *Session) {
	t.Helper()
	p, err := newProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	list, err := p.Client().ContainerList(testContext(t), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", LabelSession+"="+s.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("containers left: %d", len(list.Items))
	}
}

func TestMonolockContainerGrantsLock(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "monolock")); err != nil {
		t.Skip("cmd/monolock is not in the tree yet")
	}
	s := newSession(t)
	ctx := testContext(t)
	img, err := MonolockImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.StartMonolock(ctx, img, "monolock")
	if err != nil {
		t.Fatal(err)
	}

	acquire := func() (net.Conn, protocol.ServerFrame) {
		conn, err := net.DialTimeout("tcp", c.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(protocol.AppendAcquire(nil, 10_000, "containers-test")); err != nil {
			t.Fatal(err)
		}
		f, err := protocol.ReadServerFrame(conn)
		if err != nil {
			t.Fatal(err)
		}
		return conn, f
	}
	owner, f := acquire()
	if f.Type != protocol.TypeAcquired || f.Token == 0 {
		t.Fatalf("first ACQUIRE → %+v; want ACQUIRED with a token", f)
	}
	waiter, f2 := acquire()
	if f2.Type != protocol.TypeWaiting {
		t.Fatalf("second ACQUIRE → %+v; want WAITING", f2)
	}
	owner.Close() // closing is the release: the waiter is promoted
	f3, err := protocol.ReadServerFrame(waiter)
	if err != nil || f3.Type != protocol.TypeAcquired || f3.Token <= f.Token {
		t.Fatalf("after the owner left → %+v, %v; want ACQUIRED with a token above %d", f3, err, f.Token)
	}
}

func TestTCPFloorContainerAnswers(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "cmd", "tcpfloor")); err != nil {
		t.Skip("cmd/tcpfloor is not in the tree yet")
	}
	s := newSession(t)
	ctx := testContext(t)
	if v, err := s.EngineVersion(ctx); err != nil || !strings.Contains(v, "API") {
		t.Errorf("EngineVersion = %q, %v", v, err)
	}
	img, err := TCPFloorImage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.StartTCPFloor(ctx, img, "tcp-floor")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", c.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(protocol.AppendAcquire(nil, 1000, "k000")); err != nil {
		t.Fatal(err)
	}
	if f, err := protocol.ReadServerFrame(conn); err != nil || f.Type != protocol.TypeAcquired {
		t.Fatalf("tcp-floor answered %+v, %v; want ACQUIRED", f, err)
	}
}
