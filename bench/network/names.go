package network

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultPrefix starts the name of every object a Network creates.
const DefaultPrefix = "mlb-"

// Every run of a Network owns one /24 of 198.18.0.0/15 (RFC 2544's range
// for benchmarks, which no real network routes): run index k owns
// 198.18.0.0 + k·256. The bench is .1 of it and .192 to .254 (sources
// for its clients' connections), the hosts .2 to .191.
const (
	runSlots         = 512
	maxHosts         = 190
	benchSourcesFrom = 192
)

// netnsDir is where named namespaces live, as `ip netns` keeps them, so
// that `ip netns exec mlb-3-redis sh` works on a running bench.
const netnsDir = "/run/netns"

// hostLinkName is the name of a host's TUN device inside its namespace;
// benchLink names the bench's own in the root namespace.
func hostLinkName(prefix string) string { return prefix + "link" }

func benchLinkName(prefix string, run int) string { return prefix + strconv.Itoa(run) }

func namespaceName(prefix string, run int, host string) string {
	return prefix + strconv.Itoa(run) + "-" + host
}

func lockDir(prefix string) string { return filepath.Join("/run", prefix+"network") }

// runAddr returns address .i (1 = the bench) of run's subnet.
func runAddr(run, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, byte(18 + run/256), byte(run % 256), byte(i)})
}

// runOfName returns the run index in a name prefix+"<k>" or
// prefix+"<k>-<host>", or false when the name is not one of ours.
func runOfName(prefix, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, _, _ := strings.Cut(rest, "-")
	k, err := strconv.Atoi(digits)
	if err != nil || k < 0 || k >= runSlots || strconv.Itoa(k) != digits {
		return 0, false
	}
	return k, true
}

func checkPrefix(p string) error {
	if len(p) == 0 || len(p) > 8 {
		return fmt.Errorf("network: prefix %q must have 1 to 8 characters", p)
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("network: prefix %q may hold only a-z, 0-9 and '-'", p)
		}
	}
	if p[0] >= '0' && p[0] <= '9' || p[len(p)-1] >= '0' && p[len(p)-1] <= '9' {
		return fmt.Errorf("network: prefix %q must not start or end with a digit", p)
	}
	return nil
}

func checkHostName(n string) error {
	if len(n) == 0 || len(n) > 48 {
		return fmt.Errorf("host name %q must have 1 to 48 characters", n)
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("host name %q may hold only letters, digits, '-', '_' and '.'", n)
		}
	}
	return nil
}

// rangeLockPath is the lock every network of every prefix takes while it
// looks for a free subnet of 198.18.0.0/15 and routes it. The file stays:
// removing it could let two processes lock two different files.
const rangeLockPath = "/run/monolock-bench-network.lock"

// lockRange takes the range lock, waiting for another network's
// allocation (a few milliseconds) to end, and returns its release. The
// kernel drops the lock if the process dies holding it.
func lockRange() (unlock func(), err error) {
	f, err := os.OpenFile(rangeLockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("network: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("network: lock %s: %w", rangeLockPath, err)
	}
	return func() { f.Close() }, nil
}

// runLock is an exclusive flock on <lockDir>/<k>.lock, held for a run's
// lifetime by the bench and by its line process. The kernel drops it when
// both die, however they die, so a lock that can be taken marks the
// objects of run k as stale.
type runLock struct {
	path string
	f    *os.File
}

// errBusy means another live run holds the lock.
var errBusy = errors.New("network: run slot in use")

func tryLock(prefix string, k int) (*runLock, error) {
	dir := lockDir(prefix)
	path := filepath.Join(dir, strconv.Itoa(k)+".lock")
	for {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("network: %w", err)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			continue // the last releaser removed the directory meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("network: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, errBusy
			}
			return nil, fmt.Errorf("network: lock %s: %w", path, err)
		}
		// A releaser unlinks the file while holding the lock; if it did so
		// between our open and our flock, we hold a lock on a removed file
		// and must try again on a fresh one.
		var held, named unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &named) == nil && held.Ino == named.Ino {
			return &runLock{path: path, f: f}, nil
		}
		f.Close()
	}
}

// release removes the lock file and drops the lock, and removes the
// lock directory when it is left empty.
func (l *runLock) release() {
	os.Remove(l.path)
	l.f.Close()
	os.Remove(filepath.Dir(l.path)) // fails, as it should, while other runs' locks are in it
}
