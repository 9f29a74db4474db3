package localcluster

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSysctlFileRoundTrip(t *testing.T) {
	values := map[string]string{
		"vm.overcommit_memory":      "0",
		"kernel.panic":              "0",
		"kernel.keys.root_maxbytes": "25000000",
		"net.ipv4.ip_forward":       "1",
	}
	b := formatSysctls(values)
	got, err := parseSysctls(b)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, values) {
		t.Errorf("round trip: got %v, want %v\nfile:\n%s", got, values, b)
	}
	// sysctl.conf lines, sorted, so `sysctl -p` reads the file too.
	if want := "kernel.keys.root_maxbytes = 25000000\nkernel.panic = 0\n"; !strings.Contains(string(b), want) {
		t.Errorf("file does not hold %q sorted:\n%s", want, b)
	}
	for _, bad := range []string{"vm.overcommit_memory 1\n", "= 1\n", "../../etc/x = 1\n", "vm/overcommit = 1\n"} {
		if _, err := parseSysctls([]byte(bad)); err == nil {
			t.Errorf("parseSysctls(%q): no error", bad)
		}
	}
	got, err = parseSysctls([]byte("# c\n; c\n\n  kernel.panic=10  \n"))
	if err != nil || got["kernel.panic"] != "10" || len(got) != 1 {
		t.Errorf("comments, blanks, no spaces: got %v, %v", got, err)
	}
}

func TestRecordSysctlsKeepsTheFirstRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sysctl-before.conf")
	if err := os.WriteFile(path, []byte("kernel.panic = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A second Up after a half-started one must not record the values
	// the first one changed.
	if err := recordSysctls(path, changedSysctls); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "kernel.panic = 42\n" {
		t.Errorf("record overwritten: %q", b)
	}
}

func TestParseStagingReplaces(t *testing.T) {
	gomod := `module k8s.io/kubernetes

require k8s.io/api v0.0.0

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
	github.com/x/y => github.com/x/y v1.2.3
)

replace k8s.io/kubectl => ./staging/src/k8s.io/kubectl
replace example.com/z v1.0.0 => ../z
`
	got := parseStagingReplaces([]byte(gomod))
	want := []string{"k8s.io/api", "k8s.io/client-go", "k8s.io/kubectl"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLdflagsStampTheVersion(t *testing.T) {
	f := ldflags()
	for _, want := range []string{"-s -w", "gitVersion=" + Version, "gitMajor=1 ", "gitMinor=37 ", "gitTreeState=clean"} {
		if !strings.Contains(f+" ", want) {
			t.Errorf("ldflags %q lacks %q", f, want)
		}
	}
}

func TestPidFile(t *testing.T) {
	p := process{pid: 1234, start: 987654}
	got, err := parsePidFile([]byte(formatPidFile(p)))
	if err != nil || got != p {
		t.Errorf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "12", "x 1", "-1 5", "1 y", "1 2 3"} {
		if _, err := parsePidFile([]byte(bad)); err == nil {
			t.Errorf("parsePidFile(%q): no error", bad)
		}
	}
	// This process is alive, and its start time tells it apart.
	self := process{pid: os.Getpid()}
	var ok bool
	if self.start, ok = startTicks(self.pid); !ok || !self.alive() {
		t.Fatal("this process is not alive")
	}
	self.start++
	if self.alive() {
		t.Error("a process with another start time is alive: a reused pid would be taken for it")
	}
}

func TestRenderContainerdConfig(t *testing.T) {
	l := layout{dir: "/var/lib/x"}
	cfg := string(renderContainerdConfig(l))
	for _, want := range []string{
		"version = 2",
		`root = "/var/lib/x/containerd/root"`,
		`state = "/var/lib/x/containerd/state"`,
		`address = "/var/lib/x/containerd/containerd.sock"`,
		`sandbox_image = "` + SandboxImage + `"`,
		"SystemdCgroup = false",
		`bin_dir = "/usr/lib/cni"`,
		`conf_dir = "/var/lib/x/cni/net.d"`,
		"netns_mounts_under_state_dir = true",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	// The containerd of this host reads it and keeps every key: a key it
	// does not know is dropped from its dump.
	if _, err := os.Stat("/usr/bin/containerd"); err != nil {
		t.Skip("no /usr/bin/containerd to read the config")
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/containerd", "--config", path, "config", "dump").CombinedOutput()
	if err != nil {
		t.Fatalf("containerd config dump: %v\n%s", err, out)
	}
	for _, want := range []string{"netns_mounts_under_state_dir = true", `sandbox_image = "` + SandboxImage + `"`, `conf_dir = "/var/lib/x/cni/net.d"`, `path = "/var/lib/x/containerd/opt"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("containerd's dump lacks %q", want)
		}
	}
}

func TestRenderCNIConfig(t *testing.T) {
	l := layout{dir: "/var/lib/x"}
	var cfg struct {
		Name    string `json:"name"`
		Plugins []struct {
			Type        string `json:"type"`
			Bridge      string `json:"bridge"`
			IsGateway   bool   `json:"isGateway"`
			IPMasq      bool   `json:"ipMasq"`
			HairpinMode bool   `json:"hairpinMode"`
			IPAM        struct {
				Type    string                `json:"type"`
				DataDir string                `json:"dataDir"`
				Ranges  [][]map[string]string `json:"ranges"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(renderCNIConfig(l), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Plugins) != 2 || cfg.Plugins[0].Type != "bridge" || cfg.Plugins[1].Type != "loopback" {
		t.Fatalf("plugins: %+v", cfg.Plugins)
	}
	br := cfg.Plugins[0]
	if br.Bridge != BridgeName || !br.IsGateway || br.IPMasq || !br.HairpinMode {
		t.Errorf("bridge: %+v", br)
	}
	if br.IPAM.Type != "host-local" || !strings.HasPrefix(br.IPAM.DataDir, l.dir+"/") {
		t.Errorf("ipam: %+v", br.IPAM)
	}
	if r := br.IPAM.Ranges; len(r) != 1 || len(r[0]) != 1 || r[0][0]["subnet"] != PodSubnet || r[0][0]["gateway"] != podGateway {
		t.Errorf("ranges: %v", r)
	}
	// The ranges are in 198.18.0.0/15, never a private range.
	_, bench, _ := net.ParseCIDR("198.18.0.0/15")
	for _, cidr := range []string{PodSubnet, ServiceSubnet} {
		ip, _, err := net.ParseCIDR(cidr)
		if err != nil || !bench.Contains(ip) || ip.IsPrivate() {
			t.Errorf("%s: not in 198.18.0.0/15 (%v)", cidr, err)
		}
	}
}

func TestRenderKubeletConfig(t *testing.T) {
	l := layout{dir: "/var/lib/x"}
	var cfg map[string]any
	if err := json.Unmarshal(renderKubeletConfig(l, l.containerdSocket()), &cfg); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"containerRuntimeEndpoint": "unix:///var/lib/x/containerd/containerd.sock",
		"failSwapOn":               false,
		"protectKernelDefaults":    false,
		"resolvConf":               "/var/lib/x/resolv.conf",
		"podLogsDir":               "/var/lib/x/pod-logs",
	} {
		if cfg[key] != want {
			t.Errorf("%s = %v, want %v", key, cfg[key], want)
		}
	}
	if ev, _ := cfg["evictionHard"].(map[string]any); ev["nodefs.available"] != "1%" || ev["memory.available"] != "100Mi" {
		t.Errorf("evictionHard: %v", cfg["evictionHard"])
	}
}

func TestRenderResolvConfHasNoSearch(t *testing.T) {
	b := string(renderResolvConf())
	if !strings.HasPrefix(b, "nameserver ") || strings.Contains(b, "search") {
		t.Errorf("resolv.conf:\n%s", b)
	}
}

func TestWritePKI(t *testing.T) {
	l := layout{dir: t.TempDir()}
	hostIP := net.ParseIP("192.0.2.7")
	if err := writePKI(l, "https://127.0.0.1:6443", []net.IP{hostIP}); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, l.pki("ca.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	apiserver := readCert(t, l.pki("apiserver.crt"))
	for _, host := range []string{"127.0.0.1", serviceIP, "192.0.2.7", "localhost", "kubernetes.default.svc"} {
		if _, err := apiserver.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("apiserver certificate for %s: %v", host, err)
		}
	}
	for _, c := range clients {
		cert := readCert(t, l.pki(c.name+".crt"))
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if cert.Subject.CommonName != c.user || !slices.Equal(cert.Subject.Organization, c.groups) {
			t.Errorf("%s: subject %v", c.name, cert.Subject)
		}
		if !c.kubeconfig {
			continue
		}
		var kc struct {
			Clusters []struct {
				Cluster struct {
					Server string `json:"server"`
					CA     []byte `json:"certificate-authority-data"`
				} `json:"cluster"`
			} `json:"clusters"`
		}
		b, err := os.ReadFile(l.kubeconfig(c.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &kc); err != nil || len(kc.Clusters) != 1 || kc.Clusters[0].Cluster.Server != "https://127.0.0.1:6443" {
			t.Errorf("%s kubeconfig: %v\n%s", c.name, err, b)
		}
	}
	if groups := readCert(t, l.pki("admin.crt")).Subject.Organization; !slices.Contains(groups, "system:masters") {
		t.Errorf("admin groups %v", groups)
	}
	if _, err := os.Stat(l.pki("service-account.key")); err != nil {
		t.Error(err)
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestParseMountPoints(t *testing.T) {
	mountinfo := `22 1 0:21 / / rw - ext4 /dev/vda rw
100 22 0:50 / /var/lib/x/containerd/state/a/rootfs rw - overlay overlay rw
101 22 0:51 / /var/lib/x/kubelet/pods/u/volumes/with\040space rw - tmpfs tmpfs rw
102 22 0:52 / /var/lib/xy/other rw - tmpfs tmpfs rw
103 22 0:53 / /var/lib/x rw - tmpfs tmpfs rw
`
	got := parseMountPoints([]byte(mountinfo), "/var/lib/x")
	want := []string{"/var/lib/x/containerd/state/a/rootfs", "/var/lib/x/kubelet/pods/u/volumes/with space", "/var/lib/x"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestJumpsTo(t *testing.T) {
	listing := `-P INPUT ACCEPT
-N KUBE-FIREWALL
-A INPUT -j KUBE-FIREWALL
-A OUTPUT -j KUBE-FIREWALL
-A OUTPUT -m comment --comment "x y" -j KUBE-FIREWALL
-A KUBE-FIREWALL -d 127.0.0.0/8 -j DROP
-A FORWARD -j KUBE-FIREWALL-2
`
	got := jumpsTo([]byte(listing), "KUBE-FIREWALL")
	want := [][]string{{"INPUT", "-j", "KUBE-FIREWALL"}, {"OUTPUT", "-j", "KUBE-FIREWALL"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("got %q, want %q", got, want)
	}
}
