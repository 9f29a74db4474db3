package network

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// testPrefix keeps the tests' objects apart from a bench's.
const testPrefix = "mlbt-"

// helperEnv makes the test binary one of the helper processes below
// instead of running tests.
const helperEnv = "MLB_NETWORK_TEST_HELPER"

func TestMain(m *testing.M) {
	ChildMain()
	if role := os.Getenv(helperEnv); role != "" {
		runHelper(role)
		return
	}
	os.Exit(m.Run())
}

// runHelper is a helper process: "floor ADDR" serves a tcp-floor-like
// server (accept, read 12 bytes, write 9, close); "interfaces" prints
// the process's network interfaces and addresses; "network PREFIX"
// builds a network with two hosts, prints READY and waits to be killed;
// "contend PREFIX" builds a network at the word of its parent (contend).
func runHelper(role string) {
	fields := strings.Fields(role)
	var err error
	switch fields[0] {
	case "floor":
		err = serveFloor(fields[1])
	case "interfaces":
		err = printInterfaces(os.Stdout)
	case "network":
		err = holdNetwork(fields[1])
	case "contend":
		err = contend(fields[1])
	default:
		err = fmt.Errorf("unknown helper %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func serveFloor(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Println("LISTENING", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 12)
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			c.Write(buf[:9])
		}()
	}
}

func printInterfaces(w io.Writer) error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		fmt.Fprintln(w, i.Name, addrs)
	}
	return nil
}

func holdNetwork(prefix string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	n, err := New(ctx, Options{Prefix: prefix, Profile: Rack})
	if err != nil {
		return err
	}
	defer n.Close()
	for _, name := range []string{"a", "b"} {
		if _, err := n.AddHost(ctx, name, HostOptions{}); err != nil {
			return err
		}
	}
	fmt.Println("READY", n.run)
	bufio.NewReader(os.Stdin).ReadString('\n') // killed before stdin ends
	return nil
}

// contend is one of several processes that build networks at once: it
// prints WAITING, builds a network with one host when its parent writes
// a line, prints "READY <subnet>", and at the next line measures round
// trips to the host, now that every process has built its network, and
// prints "CHECKED <subnet> <failed>"; it closes the network at EOF.
func contend(prefix string) error {
	in := bufio.NewReader(os.Stdin)
	fmt.Println("WAITING")
	if _, err := in.ReadString('\n'); err != nil {
		return err
	}
	ctx := context.Background()
	n, err := New(ctx, Options{Prefix: prefix, Profile: Rack, CalibrationSamples: 50})
	if err != nil {
		return err
	}
	defer n.Close()
	h, err := n.AddHost(ctx, "a", HostOptions{})
	if err != nil {
		return err
	}
	fmt.Println("READY", n.Subnet())
	if _, err := in.ReadString('\n'); err != nil {
		return err
	}
	m, err := n.Measure(ctx, h, MeasureOptions{Samples: 30, Timeout: 2 * time.Second})
	if err != nil {
		return err
	}
	fmt.Println("CHECKED", n.Subnet(), m.Failed)
	in.ReadString('\n') // EOF: the parent is done
	return nil
}

// needNetwork skips a test on a machine or process that cannot build a
// network, with the reason, and under -short: namespaces, links and the
// delay line make it an integration test (make test runs it).
func needNetwork(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds emulated hosts: not under -short (make test runs it)")
	}
	if err := checkHost(); err != nil {
		if errors.Is(err, ErrUnavailable) {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// newTestNetwork builds a network for a test and closes it after.
func newTestNetwork(t *testing.T, p Profile) *Network {
	t.Helper()
	needNetwork(t)
	n, err := New(t.Context(), Options{Prefix: testPrefix, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

func addHost(t *testing.T, n *Network, name string, p *Profile) *Host {
	t.Helper()
	h, err := n.AddHost(t.Context(), name, HostOptions{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	return h
}
