package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
)

// A session's network names the process that made it (LabelOwner), so
// that a session whose process was killed before Close (a test run
// stopped by its timeout or by kill -9, a run killed by the OOM killer)
// is removed by the next session on the same host, as testcontainers'
// reaper would, which needs a registry image and is off here.

// owner is a process as the owner label writes it: the host's boot, its
// PID namespace, its PID and its start time, so that neither a reboot
// nor a reused PID nor a process in another namespace is mistaken for it.
type owner struct {
	boot, pidNS  string
	pid          int
	startedTicks uint64
}

// String is the label's value: "<boot id>/<pid namespace>/<pid>/<start ticks>".
func (o owner) String() string {
	return fmt.Sprintf("%s/%s/%d/%d", o.boot, o.pidNS, o.pid, o.startedTicks)
}

func parseOwner(s string) (owner, bool) {
	f := strings.Split(s, "/")
	if len(f) != 4 {
		return owner{}, false
	}
	pid, err1 := strconv.Atoi(f[2])
	ticks, err2 := strconv.ParseUint(f[3], 10, 64)
	if err1 != nil || err2 != nil || f[0] == "" || f[1] == "" {
		return owner{}, false
	}
	return owner{boot: f[0], pidNS: f[1], pid: pid, startedTicks: ticks}, true
}

// processOwner describes the process pid as seen from this one; false
// when /proc cannot tell (another system, or the process is gone).
func processOwner(pid int) (owner, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return owner{}, false
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return owner{}, false
	}
	ticks, ok := startTicks(pid)
	if !ok {
		return owner{}, false
	}
	return owner{boot: string(bytes.TrimSpace(boot)), pidNS: ns, pid: pid, startedTicks: ticks}, true
}

// startTicks is field 22 of /proc/<pid>/stat: when the process started,
// in clock ticks after boot. The command name (field 2) may hold spaces
// and parentheses, so fields are counted from its closing parenthesis.
func startTicks(pid int) (uint64, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(stat[i+1:]))
	const startField = 22 - 3 // fields after the name start at field 3
	if len(f) <= startField {
		return 0, false
	}
	t, err := strconv.ParseUint(f[startField], 10, 64)
	return t, err == nil
}

// gone reports whether o is known to have ended: it ran on this boot in
// this PID namespace, and no process with its PID and start time runs
// now. An owner this process cannot judge is never gone.
func (o owner) gone(self owner) bool {
	if o.boot != self.boot || o.pidNS != self.pidNS {
		return false
	}
	now, ok := processOwner(o.pid)
	return !ok || now.startedTicks != o.startedTicks
}

// removeOrphans removes every session (its containers and networks)
// whose owner label names a process of this host that has ended. It
// returns the sessions removed.
func removeOrphans(ctx context.Context, api client.APIClient) ([]string, error) {
	self, ok := processOwner(os.Getpid())
	if !ok {
		return nil, nil
	}
	nets, err := api.NetworkList(ctx, client.NetworkListOptions{Filters: make(client.Filters).Add("label", LabelOwner)})
	if err != nil {
		return nil, fmt.Errorf("bench: list sessions: %w", err)
	}
	var removed []string
	var errs []error
	for _, n := range nets.Items {
		o, ok := parseOwner(n.Labels[LabelOwner])
		session := n.Labels[LabelSession]
		if !ok || session == "" || !o.gone(self) {
			continue
		}
		if err := removeLabelled(ctx, api, LabelSession+"="+session, false); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, session)
	}
	return removed, errors.Join(errs...)
}
