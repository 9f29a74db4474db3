package monolock_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/monolock/monolocktest"
)

// timeWaitTo counts TIME_WAIT sockets (state 06 in /proc/net/tcp) whose
// remote port is port.
func timeWaitTo(t *testing.T, port int) int {
	t.Helper()
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("no /proc/net/tcp: %v", err)
	}
	suffix := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasSuffix(f[2], suffix) && f[3] == "06" {
			n++
		}
	}
	return n
}

// TestReleaseLeavesNoTimeWait: a host making many short claims must not run
// out of ephemeral ports, so Release closes with a reset.
func TestReleaseLeavesNoTimeWait(t *testing.T) {
	srv := monolocktest.NewServer(t)
	_, portText, _ := net.SplitHostPort(srv.Addr)
	var port int
	fmt.Sscan(portText, &port)
	c := newClient(t, srv.Addr)
	before := timeWaitTo(t, port)
	for i := range 20 {
		l, err := c.Acquire(context.Background(), fmt.Sprint("tw-", i), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if n := timeWaitTo(t, port) - before; n > 0 {
		t.Fatalf("%d client sockets in TIME_WAIT after 20 claims, want none", n)
	}
}
