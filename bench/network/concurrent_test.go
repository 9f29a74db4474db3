package network

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestConcurrentNetworksTakeDistinctSubnets builds networks with different
// prefixes at the same moment from separate processes, as the test
// packages of `go test ./...` and two benches started together do. Each
// must take a /24 of its own and reach its host: two networks routing
// the same /24 steal each other's packets, and every round trip of one
// of them fails.
func TestConcurrentNetworksTakeDistinctSubnets(t *testing.T) {
	needNetwork(t)
	prefixes := []string{"mlbca-", "mlbcb-", "mlbcc-", "mlbcd-"}
	type contender struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Scanner
	}
	var cs []*contender
	for _, p := range prefixes {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=contend "+p)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := &contender{cmd: cmd, stdin: stdin, out: bufio.NewScanner(out)}
		cs = append(cs, c)
		t.Cleanup(func() {
			c.stdin.Close()
			if err := c.cmd.Wait(); err != nil {
				t.Errorf("%s: %v", c.cmd.Env[len(c.cmd.Env)-1], err)
			}
		})
	}
	// expect reads the helper's next line, which must start with word.
	expect := func(c *contender, word string) []string {
		t.Helper()
		if !c.out.Scan() {
			t.Fatalf("helper %s ended before %s", c.cmd.Env[len(c.cmd.Env)-1], word)
		}
		fields := strings.Fields(c.out.Text())
		if len(fields) == 0 || fields[0] != word {
			t.Fatalf("helper said %q, want %s", c.out.Text(), word)
		}
		return fields[1:]
	}
	for _, c := range cs {
		expect(c, "WAITING")
	}
	// Every helper is started and waiting: release them together, so that
	// their allocations overlap.
	for _, c := range cs {
		io.WriteString(c.stdin, "go\n")
	}
	subnets := map[string]string{}
	for i, c := range cs {
		subnet := expect(c, "READY")[0]
		if other, ok := subnets[subnet]; ok {
			t.Errorf("%s and %s both took %s", other, prefixes[i], subnet)
		}
		subnets[subnet] = prefixes[i]
	}
	for _, c := range cs {
		io.WriteString(c.stdin, "check\n")
	}
	for i, c := range cs {
		f := expect(c, "CHECKED")
		if f[1] != "0" {
			t.Errorf("%s on %s: %s of 60 round trips and connects failed with every network up", prefixes[i], f[0], f[1])
		}
	}
	t.Logf("subnets: %v", subnets)
}
