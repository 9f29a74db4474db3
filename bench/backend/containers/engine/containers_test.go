package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptrace"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// openSessions are closed by TestMain's signal handler, so that a Ctrl-C
// during the tests leaves no container or network behind.
var openSessions struct {
	sync.Mutex
	list []*Session
}

func TestMain(m *testing.M) {
	if os.Getenv(orphanChildEnv) == "1" {
		orphanChild()
		return
	}
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

// requireDocker skips the test under -short, and when no Docker engine
// answers, unless CI is set: CI must run these tests. (benchtest's
// RequireDocker imports this package.)
func requireDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("container test: not under -short (make test runs it)")
	}
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

// echoImage builds testdata/echo; the second build must reuse the image.
func echoImage(t *testing.T) Image {
	t.Helper()
	ctx := testContext(t)
	img, err := BuildGoImage(ctx, "./bench/backend/containers/engine/testdata/echo", "containers-test-echo")
	if err != nil {
		t.Fatal(err)
	}
	again, err := BuildGoImage(ctx, "./bench/backend/containers/engine/testdata/echo", "containers-test-echo")
	if err != nil {
		t.Fatal(err)
	}
	if again.Ref != img.Ref || again.Built {
		t.Fatalf("second build = %+v; want a reuse of %s", again, img.Ref)
	}
	if img.Source != "build ./bench/backend/containers/engine/testdata/echo" {
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

// echoes reports whether the echo server at addr answers within d.
func echoes(addr string, d time.Duration) bool {
	conn, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return false
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(d)); err != nil {
		return false
	}
	if _, err := io.WriteString(conn, "x\n"); err != nil {
		return false
	}
	_, err = bufio.NewReader(conn).ReadString('\n')
	return err == nil
}

// TestContainerFaults drives every fault operation on a real container:
// a paused or cut server keeps the connection but answers nothing until
// thawed or restored; a killed or stopped one comes back on the same
// address after Restart.
func TestContainerFaults(t *testing.T) {
	s := newSession(t)
	if v, err := s.EngineVersion(testContext(t)); err != nil || !strings.Contains(v, "API") {
		t.Errorf("EngineVersion = %q, %v", v, err)
	}
	c, err := s.Start(testContext(t), Spec{Name: "echo", Image: echoImage(t), Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	addr := c.Addr()

	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, f := range []struct {
		name        string
		fault, heal func(context.Context) error
	}{{"pause", c.Pause, c.Unpause}, {"cut", c.Cut, c.Restore}} {
		if err := f.fault(ctx); err != nil {
			t.Fatal(err)
		}
		if err := conn.SetDeadline(time.Now().Add(500 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, f.name+"\n"); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: echo → %q, %v; want a timeout", f.name, got, err)
		}
		if err := f.heal(ctx); err != nil {
			t.Fatal(err)
		}
		if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if got, err := r.ReadString('\n'); err != nil || got != f.name+"\n" {
			t.Fatalf("after %s ends the pending echo → %q, %v", f.name, got, err)
		}
	}

	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CPU <= 0 || st.MemoryBytes == 0 {
		t.Errorf("stats of a running container = %+v; want CPU and memory above zero", st)
	}
	for _, f := range []func(context.Context) error{c.Kill, c.Stop} {
		if err := f(ctx); err != nil {
			t.Fatal(err)
		}
		if echoes(c.Addr(), time.Second) {
			t.Fatal("a killed or stopped container answers")
		}
		if err := c.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if c.Addr() != addr && s.Path == PathDirect {
			t.Errorf("address changed across restart: %s → %s", addr, c.Addr())
		}
		if !echoes(c.Addr(), 5*time.Second) {
			t.Fatal("a restarted container does not answer")
		}
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

// TestLifecycleCallsKeepConnections: testcontainers closes its provider's
// client after a container's Start, Logs and port lookup. When that was
// the engine client the whole session shares, it dropped the idle
// connections other goroutines were about to use, and a POST that had
// just taken one failed with "CloseIdleConnections called" (a redlock
// master's start in CI). A request after Logs must reuse a connection.
func TestLifecycleCallsKeepConnections(t *testing.T) {
	s := newSession(t)
	ctx := testContext(t)
	c, err := s.Start(ctx, Spec{Name: "echo", Image: echoImage(t), Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	reused := 0
	for range rounds {
		if _, err := c.Logs(ctx); err != nil {
			t.Fatal(err)
		}
		var got bool
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { got = info.Reused }}
		if _, err := c.API().ContainerInspect(httptrace.WithClientTrace(ctx, trace), c.ID, client.ContainerInspectOptions{}); err != nil {
			t.Fatal(err)
		}
		if got {
			reused++
		}
	}
	t.Logf("%d of %d inspections after Logs reused a connection", reused, rounds)
	if reused < rounds/2 {
		t.Errorf("%d of %d inspections after Logs reused a connection; want most: Logs closed the session's connections", reused, rounds)
	}
}

// orphanChildEnv makes the test binary a process that opens a session,
// starts one container, prints the session's ID and waits to be killed.
const orphanChildEnv = "ENGINE_TEST_ORPHAN_CHILD"

func orphanChild() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	img, err := BuildGoImage(ctx, "./bench/backend/containers/engine/testdata/echo", "containers-test-echo")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s, err := NewSession(ctx)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if _, err := s.Start(ctx, Spec{Name: "orphan", Image: img, Port: 8080}); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("session:", s.ID)
	<-ctx.Done()
}

// TestKilledProcessSessionIsRemoved: a process killed before it closes
// its session (a test binary stopped by its timeout, kill -9) leaves its
// containers and network running; the next session on the host removes
// them, and leaves alone a session whose process still runs.
func TestKilledProcessSessionIsRemoved(t *testing.T) {
	live := newSession(t)
	echoImage(t) // built before the child, which reuses it
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), orphanChildEnv+"=1")
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = child.Process.Kill() // SIGKILL: no cleanup runs
	_ = child.Wait()
	id, ok := strings.CutPrefix(strings.TrimSpace(line), "session: ")
	if err != nil || !ok {
		t.Fatalf("child said %q (%v); want its session", line, err)
	}
	ctx := testContext(t)
	p, err := newProvider()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	count := func(session string) (containers, networks int) {
		filter := make(client.Filters).Add("label", LabelSession+"="+session)
		c, err := p.Client().ContainerList(ctx, client.ContainerListOptions{All: true, Filters: filter})
		if err != nil {
			t.Fatal(err)
		}
		n, err := p.Client().NetworkList(ctx, client.NetworkListOptions{Filters: filter})
		if err != nil {
			t.Fatal(err)
		}
		return len(c.Items), len(n.Items)
	}
	if c, n := count(id); c != 1 || n != 1 {
		t.Fatalf("the killed child's session %s has %d containers and %d networks; want 1 and 1", id, c, n)
	}
	newSession(t)
	if c, n := count(id); c != 0 || n != 0 {
		t.Errorf("after a new session, the killed child's session %s still has %d containers and %d networks", id, c, n)
	}
	if _, n := count(live.ID); n != 1 {
		t.Errorf("a live session's network was removed (%d left)", n)
	}
}
