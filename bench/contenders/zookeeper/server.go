package zookeeper

// The ensemble: each member's zoo.cfg, its command line on the local
// backend and in the image, and the readiness check.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/backend/local"
)

// The ensemble this package runs.
const (
	// Members is the ensemble size: the smallest that keeps granting with
	// one member down.
	Members = 3
	// ClientPort is the members' client port inside their containers;
	// PeerPort their quorum port (followers to the leader). A member also
	// needs an election port, which a ServerSpec cannot name (it has one
	// peer port): see electionPorts.
	ClientPort = 2181
	PeerPort   = 2888
	// ImageName names the image: monolock-bench/zookeeper:<tag>.
	ImageName = "zookeeper"
	// TickTime is the ensemble's basic time unit: the server checks
	// session expiry every tick, so a session ends within a tick of its
	// timeout. ZooKeeper's default is 2s; 100ms lets the session timeout
	// follow the suite's leases closely.
	TickTime = 100 * time.Millisecond
	// MinSessionTimeout and MaxSessionTimeout bound the session timeout
	// a client may ask for (a request outside is clamped by the server).
	// The defaults would be 2 and 20 ticks (200ms, 2s); the maximum is
	// raised to 60s for the scale scenario's 30s lease.
	MinSessionTimeout = 200 * time.Millisecond
	MaxSessionTimeout = 60 * time.Second
	// InitLimit and SyncLimit, in ticks: how long a follower may take to
	// connect to and sync with a new leader (10s), and how far it may lag
	// behind it before it is dropped (2s). ZooKeeper's sample
	// configuration uses 10 and 5 ticks of 2s.
	InitLimit = 100
	SyncLimit = 20
)

// electionPorts returns the election port of every member of a.Peers.
// A member on its own address (a container, an emulated host) uses its
// quorum port + 1 (2889 in a container). Members sharing one address
// (child processes on 127.0.0.1) get free ports instead, the same for
// every member of one ensemble: the local backend asks Command for each
// member in turn with the same peers, and port + 1 may be another
// member's client or quorum port there.
func electionPorts(a bench.ServerArgs) ([]int, error) {
	hosts := map[string]bool{}
	for _, p := range a.Peers {
		h, _, _ := net.SplitHostPort(p)
		hosts[h] = true
	}
	if len(hosts) == len(a.Peers) {
		ports := make([]int, len(a.Peers))
		for i, p := range a.Peers {
			_, ps, _ := net.SplitHostPort(p)
			n, err := strconv.Atoi(ps)
			if err != nil {
				return nil, fmt.Errorf("zookeeper: peer port %q", ps)
			}
			ports[i] = n + 1
		}
		return ports, nil
	}
	key := strings.Join(a.Peers, ",")
	sharedElection.Lock()
	defer sharedElection.Unlock()
	if ports, ok := sharedElection.ports[key]; ok {
		return ports, nil
	}
	ports := make([]int, len(a.Peers))
	for i := range ports {
		addr, err := local.FreeAddr()
		if err != nil {
			return nil, err
		}
		_, ps, _ := net.SplitHostPort(addr)
		ports[i], _ = strconv.Atoi(ps)
	}
	sharedElection.ports[key] = ports
	return ports, nil
}

// sharedElection holds the election ports chosen for the ensembles of
// members sharing one address, by their peers.
var sharedElection = struct {
	sync.Mutex
	ports map[string][]int
}{ports: map[string][]int{}}

// ServerSettings are the zoo.cfg lines every member gets besides its
// ports, peers and data directory: the timing above, no limit on client
// connections per address (maxClientCnxns, default 60: the scale
// scenario opens thousands of sessions from one address), the admin HTTP
// server off (it would take port 8080), the four-letter commands the
// readiness check, Version and the counters use, reconfiguration off,
// 4 MiB transaction log preallocation instead of 64 MiB (disk, not
// semantics), hourly purge of old snapshots. fsync of the transaction log
// stays on (forceSync default yes), as the etcd contender keeps its fsync.
// The first leadSettings are what a lock's figures depend on; the report
// names those and leaves the rest to results.json.
var ServerSettings = []string{
	"tickTime=" + strconv.FormatInt(TickTime.Milliseconds(), 10),
	"minSessionTimeout=" + strconv.FormatInt(MinSessionTimeout.Milliseconds(), 10),
	"maxSessionTimeout=" + strconv.FormatInt(MaxSessionTimeout.Milliseconds(), 10),
	"maxClientCnxns=0",
	"initLimit=" + strconv.Itoa(InitLimit),
	"syncLimit=" + strconv.Itoa(SyncLimit),
	"admin.enableServer=false",
	"4lw.commands.whitelist=srvr,mntr,ruok",
	"reconfigEnabled=false",
	"standaloneEnabled=false",
	"preAllocSize=4096",
	"autopurge.snapRetainCount=3",
	"autopurge.purgeInterval=1",
}

const leadSettings = 4

// JVMFlags are the Java runtime's flags for a member: a bounded heap (the
// default is a quarter of the machine's memory, per member), the serial
// collector (two cores shared by three members), no perf-data file, the
// SLF4J logger at level error (stderr).
var JVMFlags = []string{
	"-Xms32m", "-Xmx512m",
	"-XX:+UseSerialGC",
	"-XX:-UsePerfData",
	"-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
}

// MemberConfig returns the zoo.cfg of member a.Replica (id a.Replica+1): data
// in dataDir, clients at a.Listen, the quorum ports of every member from
// a.Peers and their election ports (electionPorts). When the member listens for peers on another
// address than its peers use (0.0.0.0 in a container reached by name),
// quorumListenOnAllIPs makes it bind every address.
func MemberConfig(a bench.ServerArgs, dataDir string) (string, error) {
	var b strings.Builder
	for _, s := range ServerSettings {
		b.WriteString(s + "\n")
	}
	host, port, err := net.SplitHostPort(a.Listen)
	if err != nil {
		return "", fmt.Errorf("zookeeper: client address: %w", err)
	}
	fmt.Fprintf(&b, "dataDir=%s\nclientPort=%s\nclientPortAddress=%s\n", dataDir, port, host)
	if len(a.Peers) == 0 || a.Replica >= len(a.Peers) {
		return "", fmt.Errorf("zookeeper: member %d of %d peers", a.Replica, len(a.Peers))
	}
	election, err := electionPorts(a)
	if err != nil {
		return "", err
	}
	for i, p := range a.Peers {
		h, ps, err := net.SplitHostPort(p)
		if err != nil {
			return "", fmt.Errorf("zookeeper: peer address: %w", err)
		}
		fmt.Fprintf(&b, "server.%d=%s:%s:%d\n", i+1, h, ps, election[i])
	}
	if a.PeerListen != a.Peers[a.Replica] {
		b.WriteString("quorumListenOnAllIPs=true\n")
	}
	return b.String(), nil
}

// MyID is the content of a member's dataDir/myid.
func MyID(replica int) string { return strconv.Itoa(replica+1) + "\n" }

// javaArgs is the command line of a member with configuration cfg.
func javaArgs(in Install, cfg string) []string {
	args := append([]string{in.Java}, JVMFlags...)
	return append(args, "-cp", in.ClassPath(), MainClass, cfg)
}

// localCommand writes member a.Replica's zoo.cfg and myid into a.Dir
// (data in a.Dir/data) and returns the command line that runs it with the
// host's install.
func localCommand(ctx context.Context, a bench.ServerArgs) ([]string, error) {
	in, err := FindInstall(ctx)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(a.Dir, "data")
	cfg, err := MemberConfig(a, data)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(data, 0o700); err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	path := filepath.Join(a.Dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(MyID(a.Replica)), 0o600); err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	return javaArgs(in, path), nil
}

// The member's files inside the image.
const (
	imageConfig = "/data/zoo.cfg"
	imageData   = "/data/data"
)

// containerArgs is the image's command for member a.Replica: zkmember
// writes its zoo.cfg and myid, then runs the runtime at the host's paths
// (copied into the image at the same paths).
func containerArgs(in Install, a bench.ServerArgs) []string {
	cfg, err := MemberConfig(a, imageData)
	if err != nil {
		// Args cannot fail: a member without its peers exits at once
		// with this message, which the backend reports.
		return []string{"--", "/zkmember-config-error", err.Error()}
	}
	args := []string{
		"-write", imageConfig + "=" + cfg,
		"-write", imageData + "/myid=" + MyID(a.Replica),
		"--",
	}
	return append(args, javaArgs(in, imageConfig)...)
}

// readyTimeout bounds one readiness check.
const readyTimeout = 2 * time.Second

// Ready asks the member at addr for a session and, on it, whether the
// root node exists: a member serves clients only once it is in a quorum
// that has a leader, and creating a session is a write the quorum
// commits.
func Ready(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	conn, events, err := zk.Connect([]string{addr}, 4*time.Second, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("zookeeper: %w", err)
	}
	defer conn.Close()
	if err := awaitSession(ctx, events); err != nil {
		return err
	}
	ok, _, err := conn.Exists("/")
	if err != nil {
		return fmt.Errorf("zookeeper: exists /: %w", err)
	}
	if !ok {
		return errors.New("zookeeper: the root node does not exist")
	}
	return nil
}

// awaitSession waits for a connection's session (StateHasSession).
func awaitSession(ctx context.Context, events <-chan zk.Event) error {
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return errors.New("zookeeper: connection closed before a session")
			}
			switch ev.State {
			case zk.StateHasSession:
				return nil
			case zk.StateExpired, zk.StateAuthFailed:
				return fmt.Errorf("zookeeper: session: %v", ev.State)
			}
		case <-ctx.Done():
			return fmt.Errorf("zookeeper: no session: %w", ctx.Err())
		}
	}
}

// FourLetter sends a four-letter command (srvr, mntr, ruok) to the member
// at addr and returns its answer.
func FourLetter(ctx context.Context, addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", fmt.Errorf("zookeeper: %s: %w", cmd, err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", fmt.Errorf("zookeeper: %s: %w", cmd, err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("zookeeper: %s: %w", cmd, err)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("zookeeper: %s: empty answer (not in the whitelist?)", cmd)
	}
	return b.String(), nil
}

// version asks a member for the version srvr reports: "ZooKeeper 3.8.0".
func version(ctx context.Context, addr string) (string, error) {
	out, err := FourLetter(ctx, addr, "srvr")
	if err != nil {
		return "", err
	}
	var v string
	for line := range strings.Lines(out) {
		if s, ok := strings.CutPrefix(line, "Zookeeper version: "); ok {
			v, _, _ = strings.Cut(strings.TrimSpace(s), ",")
			v, _, _ = strings.Cut(v, "-")
		}
	}
	if v == "" {
		return "", fmt.Errorf("zookeeper: srvr answered %q", out)
	}
	return "ZooKeeper " + v, nil
}

// quietLogger drops the client library's log lines (it logs every
// reconnect, which would flood a failover run).
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}
