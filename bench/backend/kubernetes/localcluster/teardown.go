package localcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
)

// Down stops the cluster of stateDir ("" means DefaultStateDir), whether
// it is up, half started or already stopped, and removes everything it
// made: its processes and every container's, the mounts below the state
// dir, the pods' bridge and veths, the iptables rules and kubelet's
// chains, kubelet's cgroups, its entries in host directories; it puts the
// recorded sysctls back and removes the state dir. When a step fails, the
// others still run and the state dir is kept (it holds the records a
// second Down needs). No state dir is success.
func Down(ctx context.Context, stateDir string, log *slog.Logger) error {
	if log == nil {
		log = slog.Default()
	}
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	l := layout{dir: filepath.Clean(stateDir)}
	if _, err := os.Stat(l.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	unlock, err := lockStateDir(l)
	if err != nil {
		return err
	}
	defer unlock()
	return down(ctx, l, log)
}

func down(ctx context.Context, l layout, log *slog.Logger) error {
	if _, err := os.Stat(l.dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	start := time.Now()
	record, _, err := readHostRecord(l)
	if err != nil {
		return err
	}
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// kubelet first: it would restart the containers removed next.
	keep(stopProcess(ctx, l, compKubelet, stopGrace))
	if _, ok := findProcess(l, compContainerd); ok {
		keep(removeContainers(ctx, l))
	}
	for _, name := range slices.Backward(components) {
		keep(stopProcess(ctx, l, name, stopGrace))
	}
	// What containerd could not stop: shims of this containerd, and the
	// processes of pods (in kubelet's cgroups, when it made them).
	keep(killStrays(l, record))
	keep(unmountBelow(l.dir))
	keep(deleteBridge())
	keep(removeStaleShimSockets())
	keep(deleteRules(ctx, record))
	keep(deleteChains(ctx, record))
	keep(removeCgroups(ctx, record.Cgroups))
	keep(restoreSysctls(l.path("sysctl-before.conf")))
	keep(removeCreatedPaths(l, record))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("localcluster: down left %s in place: %w", l.dir, err)
	}
	if err := os.RemoveAll(l.dir); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	log.Info("localcluster: cluster down", "state", l.dir, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// removeContainers kills and deletes every task and container of the
// CRI namespace through containerd: the shims then unmount the rootfs
// and exit, removing their sockets.
func removeContainers(ctx context.Context, l layout) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ctr := "/usr/bin/ctr"
	if info, err := readClusterInfo(l); err == nil && info.Ctr != "" {
		ctr = info.Ctr
	}
	out, err := runCtr(ctx, ctr, l, "tasks", "ls", "-q")
	if err != nil {
		return err
	}
	tasks := strings.Fields(string(out))
	for _, id := range tasks {
		runCtr(ctx, ctr, l, "tasks", "kill", "--signal", "SIGKILL", id) // may have exited already
	}
	// The CRI plugin deletes a sandbox's task itself once it exited;
	// what is left after a few seconds is deleted here.
	for range 50 {
		if out, err = runCtr(ctx, ctr, l, "tasks", "ls", "-q"); err != nil || len(bytes.TrimSpace(out)) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var errs []error
	for _, id := range strings.Fields(string(out)) {
		if _, err := runCtr(ctx, ctr, l, "tasks", "delete", "--force", id); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
	}
	out, err = runCtr(ctx, ctr, l, "containers", "ls", "-q")
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range strings.Fields(string(out)) {
		if _, err := runCtr(ctx, ctr, l, "containers", "delete", id); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func readClusterInfo(l layout) (clusterInfo, error) {
	var info clusterInfo
	b, err := os.ReadFile(l.clusterFile())
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(b, &info)
}

// killStrays SIGKILLs the shims that serve this cluster's containerd
// (their command line names its socket) and, when kubelet's cgroups are
// the cluster's, every process in them.
func killStrays(l layout, r hostRecord) error {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	ours := len(r.Cgroups) > 0
	var killed []process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		stray := bytes.Contains(cmdline, []byte(l.containerdSocket()))
		if !stray && ours {
			cg, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			stray = bytes.Contains(cg, []byte(":/kubepods/")) || bytes.Contains(cg, []byte(":/kubepods\n"))
		}
		if !stray {
			continue
		}
		if start, ok := startTicks(pid); ok {
			syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, process{pid: pid, start: start})
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range killed {
		for p.alive() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if p.alive() {
			return fmt.Errorf("localcluster: pid %d outlived SIGKILL", p.pid)
		}
	}
	return nil
}

// unmountBelow unmounts every mount point at or below dir, deepest
// first, detaching (MNT_DETACH) one that is busy.
func unmountBelow(dir string) error {
	for range 5 {
		points, err := mountsBelow(dir)
		if err != nil || len(points) == 0 {
			return err
		}
		for _, p := range points {
			if err := syscall.Unmount(p, 0); err != nil {
				syscall.Unmount(p, syscall.MNT_DETACH)
			}
		}
	}
	points, err := mountsBelow(dir)
	if err == nil && len(points) > 0 {
		err = fmt.Errorf("localcluster: still mounted: %s", strings.Join(points, " "))
	}
	return err
}

// mountsBelow lists the mount points at or below dir, deepest first.
func mountsBelow(dir string) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("localcluster: %w", err)
	}
	points := parseMountPoints(b, dir)
	slices.SortFunc(points, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return slices.Compact(points), nil
}

// parseMountPoints returns the mount points (field 5 of mountinfo, with
// its octal escapes undone) at or below dir.
func parseMountPoints(mountinfo []byte, dir string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		p := unescapeMountPath(f[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// unescapeMountPath undoes mountinfo's \ooo escapes (space, tab, newline,
// backslash).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// deleteBridge deletes the pods' bridge and any veth still in it (the
// pods' network namespaces are gone by now, which takes their veths).
func deleteBridge() error {
	br, err := netlink.LinkByName(BridgeName)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return nil
		}
		return fmt.Errorf("localcluster: %w", err)
	}
	links, err := netlink.LinkList()
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	var errs []error
	for _, link := range links {
		if link.Attrs().MasterIndex == br.Attrs().Index && link.Type() == "veth" {
			if err := netlink.LinkDel(link); err != nil {
				errs = append(errs, fmt.Errorf("localcluster: delete %s: %w", link.Attrs().Name, err))
			}
		}
	}
	if err := netlink.LinkDel(br); err != nil {
		errs = append(errs, fmt.Errorf("localcluster: delete %s: %w", BridgeName, err))
	}
	return errors.Join(errs...)
}

// removeStaleShimSockets removes the sockets in /run/containerd/s that no
// shim listens on any more (a shim that was killed leaves its socket).
// The directory is shared with other containerds' shims, whose live
// sockets stay.
func removeStaleShimSockets() error {
	entries, err := os.ReadDir("/run/containerd/s")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSocket == 0 {
			continue
		}
		p := filepath.Join("/run/containerd/s", e.Name())
		conn, err := net.DialTimeout("unix", p, time.Second)
		if err == nil {
			conn.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			os.Remove(p)
		}
	}
	return nil
}

// removeCgroups removes the recorded cgroup directories with every
// directory below them, deepest first. A cgroup empties a moment after
// its last process died, so a busy one is retried for a few seconds.
func removeCgroups(ctx context.Context, roots []string) error {
	var errs []error
	for _, root := range roots {
		var dirs []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
		for _, d := range dirs {
			var err error
			for range 50 {
				if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(100 * time.Millisecond):
				}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("localcluster: rmdir %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
