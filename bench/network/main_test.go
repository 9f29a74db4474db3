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
// builds a network with two hosts, prints READY and waits to be killed.
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
