package host

import (
	"runtime"
	"strings"

	"github.com/monolock/monolock-bench/bench/results"
)

// Environment describes the machine the bench process runs on: CPU
// model (from /proc/cpuinfo), cores, GOMAXPROCS, kernel release, OS,
// architecture and Go version. Fields it cannot read stay empty.
func Environment() results.Environment {
	return results.Environment{
		CPUModel:   cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Kernel:     kernelRelease(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		GoVersion:  runtime.Version(),
		Sysctls:    sysctls(),
	}
}

// recordedSysctls shape connection-per-claim figures: a client that closes
// first keeps a TIME_WAIT socket per claim, and the port range bounds how
// many it may hold (tcp_tw_reuse 2 reuses them on loopback only); TCP Fast
// Open saves a claim's handshake.
var recordedSysctls = []string{
	"net.ipv4.tcp_tw_reuse", "net.ipv4.ip_local_port_range",
	"net.ipv4.tcp_fin_timeout", "net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog",
	// The ceilings of open files, which bound the sessions of the scale
	// scenario; read, never changed.
	"fs.nr_open", "fs.file-max",
	// TCP Fast Open: bit 0x1 lets the bench's clients send data in the
	// SYN, bit 0x2 lets a server in this namespace accept it.
	"net.ipv4.tcp_fastopen",
}

func sysctls() map[string]string {
	m := map[string]string{}
	fs, err := proc()
	if err != nil {
		return m
	}
	for _, k := range recordedSysctls {
		if v, err := fs.SysctlStrings(k); err == nil {
			m[k] = strings.Join(v, " ")
		}
	}
	return m
}

// cpuModel is the model name of the first CPU in /proc/cpuinfo.
func cpuModel() string {
	fs, err := proc()
	if err != nil {
		return ""
	}
	cpus, err := fs.CPUInfo()
	if err != nil || len(cpus) == 0 {
		return ""
	}
	return cpus[0].ModelName
}

// kernelRelease is the running kernel's release (kernel.osrelease).
func kernelRelease() string {
	fs, err := proc()
	if err != nil {
		return ""
	}
	v, err := fs.SysctlStrings("kernel.osrelease")
	if err != nil {
		return ""
	}
	return strings.Join(v, " ")
}
