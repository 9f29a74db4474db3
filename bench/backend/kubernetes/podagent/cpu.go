package podagent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cgroupCPUFiles are where a container sees its own cgroup's CPU time:
// cgroup v2's cpu.stat, then v1's cpuacct.usage under the names
// distributions mount it. The agent's own CPU is in it, a few
// microseconds per request.
var cgroupCPUFiles = []string{
	"/sys/fs/cgroup/cpu.stat",
	"/sys/fs/cgroup/cpuacct/cpuacct.usage",
	"/sys/fs/cgroup/cpu,cpuacct/cpuacct.usage",
}

// containerCPU reads the container's CPU time from its cgroup.
func containerCPU() (time.Duration, string, error) {
	for _, path := range cgroupCPUFiles {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, "", fmt.Errorf("podagent: %w", err)
		}
		if strings.HasSuffix(path, "cpu.stat") {
			usec, err := statField(data, "usage_usec")
			return time.Duration(usec) * time.Microsecond, "cgroup v2 cpu.stat usage_usec of the server's container, read in it", err
		}
		ns, err := strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("podagent: %s: %w", path, err)
		}
		return time.Duration(ns), "cgroup v1 cpuacct.usage of the server's container, read in it", nil
	}
	return 0, "", errors.New("podagent: the container sees no cgroup CPU file")
}

func statField(data []byte, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == name {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("podagent: cpu.stat has no %s", name)
}
