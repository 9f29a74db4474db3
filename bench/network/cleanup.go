package network

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Sweep removes what runs of the bench with this prefix left behind when
// they were killed: named namespaces, devices and lock files of run slots
// that no live process holds. Objects of live runs are left alone. It
// returns the names it removed. New calls it.
func Sweep(prefix string) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	runs := map[int]bool{}
	entries, err := os.ReadDir(netnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("network: %w", err)
	}
	for _, e := range entries {
		if k, ok := runOfName(prefix, e.Name()); ok {
			runs[k] = true
		}
	}
	links, err := retryDump(netlink.LinkList)
	if err != nil {
		return nil, fmt.Errorf("network: list devices: %w", err)
	}
	for _, l := range links {
		if k, ok := runOfName(prefix, l.Attrs().Name); ok {
			runs[k] = true
		}
	}
	locks, err := os.ReadDir(lockDir(prefix))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("network: %w", err)
	}
	for _, e := range locks {
		if k, ok := runOfName(prefix, prefix+strings.TrimSuffix(e.Name(), ".lock")); ok {
			runs[k] = true
		}
	}
	var removed []string
	var errs []error
	for k := range runs {
		l, err := tryLock(prefix, k)
		if errors.Is(err, errBusy) {
			continue // a live run's
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r, err := sweepRun(prefix, k, slog.Default())
		removed = append(removed, r...)
		errs = append(errs, err)
		l.release()
		removed = append(removed, l.path)
	}
	return removed, errors.Join(errs...)
}

// sweepRun removes the namespaces and devices of run k, whose lock the
// caller holds.
func sweepRun(prefix string, k int, log *slog.Logger) ([]string, error) {
	var removed []string
	var errs []error
	entries, _ := os.ReadDir(netnsDir)
	for _, e := range entries {
		if kk, ok := runOfName(prefix, e.Name()); ok && kk == k {
			if pids := pidsInNamespace(netnsDir + "/" + e.Name()); len(pids) > 0 {
				log.Warn("network: processes of a killed run still run in its namespace; it is unnamed now and unreachable", "namespace", e.Name(), "pids", pids)
			}
			if err := removeNamespace(e.Name()); err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, netnsDir+"/"+e.Name())
		}
	}
	name := benchLinkName(prefix, k)
	if _, err := netlink.LinkByName(name); err == nil {
		if err := removeLink(name); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, name)
		}
	}
	return removed, errors.Join(errs...)
}

// pidsInNamespace lists the processes whose network namespace is the one
// bound at path.
func pidsInNamespace(path string) []int {
	var want unix.Stat_t
	if unix.Stat(path, &want) != nil {
		return nil
	}
	procs, _ := os.ReadDir("/proc")
	var pids []int
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscan(p.Name(), &pid); err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+p.Name()+"/ns/net", &st) == nil && st.Ino == want.Ino && st.Dev == want.Dev {
			pids = append(pids, pid)
		}
	}
	return pids
}
