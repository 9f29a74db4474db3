package localcluster

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// changedSysctls are the host settings a cluster changes: kubelet sets
// the first six at start (its kernel tunables, since
// protectKernelDefaults is false) and the bridge CNI plugin turns on IPv4
// forwarding for a gateway bridge. Up records them before it starts
// anything; Down writes back those that differ.
var changedSysctls = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward",
}

// sysctlPath is the /proc/sys file of a setting.
func sysctlPath(name string) string { return "/proc/sys/" + strings.ReplaceAll(name, ".", "/") }

// readSysctls returns the current values of names.
func readSysctls(names []string) (map[string]string, error) {
	values := make(map[string]string, len(names))
	for _, n := range names {
		b, err := os.ReadFile(sysctlPath(n))
		if err != nil {
			return nil, fmt.Errorf("localcluster: sysctl %s: %w", n, err)
		}
		values[n] = strings.TrimSpace(string(b))
	}
	return values, nil
}

// recordSysctls writes the current values of names to path in
// sysctl.conf format, unless path exists: after an Up that stopped half
// way the file holds the values from before the first one, which are the
// ones to restore.
func recordSysctls(path string, names []string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	values, err := readSysctls(names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, formatSysctls(values), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

// restoreSysctls writes back every value recorded in path that differs
// from the current one. No file is success: nothing was changed.
func restoreSysctls(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	want, err := parseSysctls(b)
	if err != nil {
		return err
	}
	var errs []error
	for name, value := range want {
		cur, err := os.ReadFile(sysctlPath(name))
		if err == nil && strings.TrimSpace(string(cur)) == value {
			continue
		}
		if err := os.WriteFile(sysctlPath(name), []byte(value+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("localcluster: restore sysctl %s=%s: %w", name, value, err))
		}
	}
	return errors.Join(errs...)
}

// formatSysctls writes values as sysctl.conf lines, "name = value", sorted
// by name, so that `sysctl -p <file>` restores them by hand too.
func formatSysctls(values map[string]string) []byte {
	var b bytes.Buffer
	b.WriteString("# host settings before the cluster started; restored by Down\n")
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s = %s\n", n, values[n])
	}
	return b.Bytes()
}

// parseSysctls reads sysctl.conf lines; blank lines and comments (# or ;)
// are skipped.
func parseSysctls(b []byte) (map[string]string, error) {
	values := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t/") || strings.Contains(name, "..") {
			return nil, fmt.Errorf("localcluster: sysctl file line %d: %q: want \"name = value\"", n, line)
		}
		values[name] = value
	}
	return values, nil
}
