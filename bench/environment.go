package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// HostEnvironment describes the machine the bench process runs on: CPU
// model (from /proc/cpuinfo), cores, GOMAXPROCS, kernel release, OS,
// architecture and Go version. Fields it cannot read stay empty.
func HostEnvironment() results.Environment {
	return results.Environment{
		CPUModel:   cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Kernel:     kernelRelease(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		GoVersion:  runtime.Version(),
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
