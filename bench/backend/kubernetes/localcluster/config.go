package localcluster

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The cluster's fixed names and addresses. The pod and service ranges are
// in 198.18.0.0/15 (RFC 2544, benchmarking), never a private range that a
// host's own networks may use.
const (
	// NodeName is the cluster's only node.
	NodeName = "monolock-bench-node"
	// NodeLabel is set to "true" on the node (kubelet --node-labels).
	NodeLabel = "org.monolock-bench/node"
	// PodSubnet holds every pod IP (CNI host-local IPAM); its first
	// address is the bridge, the pods' gateway.
	PodSubnet = "198.19.255.0/24"
	// ServiceSubnet is the apiserver's service cluster IP range. No
	// kube-proxy runs: Service IPs are allocated but not routed.
	ServiceSubnet = "198.19.254.0/24"
	// BridgeName is the host bridge the pods' veths join.
	BridgeName = "mlbk8s0"
	// SandboxImage is the pause image's name in the node's containerd,
	// containerd's sandbox_image; Up builds it from source and imports it.
	SandboxImage = "registry.k8s.io/pause:3.10"
	// ImageNamespace is the containerd namespace of the CRI plugin, where
	// Import puts images.
	ImageNamespace = "k8s.io"
)

// Derived addresses.
const (
	podGateway = "198.19.255.1"
	serviceIP  = "198.19.254.1" // the kubernetes Service's ClusterIP
	// cniNetwork names the CNI network (and its config file).
	cniNetwork = "monolock-bench"
)

// renderContainerdConfig returns the config.toml (version 2, for
// containerd 1.6 and 1.7) of the node's containerd: its own root, state
// and socket below the state dir so that it shares nothing with the
// host's containerd, the CRI plugin on with runc under cgroupfs (the
// host has no systemd), CNI from the state dir, network namespaces and
// runc's state under the state dir too so Down finds them. Container OOM
// score adjustments are kept at or above containerd's own: a host (or a
// sandbox) without CAP_SYS_RESOURCE cannot lower them, and runc would
// fail to start every pod sandbox (which kubelet asks at -998).
func renderContainerdConfig(l layout) []byte {
	q := strconv.Quote
	var b strings.Builder
	fmt.Fprintf(&b, `version = 2
root = %s
state = %s

[grpc]
  address = %s

[ttrpc]
  address = %s

[plugins."io.containerd.internal.v1.opt"]
  path = %s

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %s
  netns_mounts_under_state_dir = true
  enable_selinux = false
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %s

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %s
    conf_dir = %s
    max_conf_num = 1
`,
		q(l.path("containerd", "root")),
		q(l.path("containerd", "state")),
		q(l.containerdSocket()),
		q(l.containerdSocket()+".ttrpc"),
		q(l.path("containerd", "opt")),
		q(SandboxImage),
		q(l.path("containerd", "runc")),
		q(cniBinDir),
		q(l.cniConfDir()),
	)
	return []byte(b.String())
}

// cniBinDir holds the CNI plugins of Debian's containernetworking-plugins.
const cniBinDir = "/usr/lib/cni"

// renderCNIConfig returns the CNI network list of the pods: a bridge that
// is the pods' gateway, without masquerading (pods talk to each other and
// to this host only), hairpin on so a pod reaches itself through its own
// address; host-local addresses from PodSubnet, stored below the state
// dir; and loopback for each pod's lo.
func renderCNIConfig(l layout) []byte {
	cfg := map[string]any{
		"cniVersion": "1.0.0",
		"name":       cniNetwork,
		"plugins": []map[string]any{
			{
				"type":        "bridge",
				"bridge":      BridgeName,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": l.cniIPAMDir(),
					"ranges": [][]map[string]string{{{
						"subnet":  PodSubnet,
						"gateway": podGateway,
					}}},
					"routes": []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			{"type": "loopback"},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err) // maps of strings and bools always marshal
	}
	return append(b, '\n')
}

// renderKubeletConfig returns the KubeletConfiguration, in JSON. It is
// made for this host: cgroup v1 allowed (failCgroupV1 false), cgroupfs
// (no systemd), swap tolerated, eviction only when a resource is nearly
// gone (a small disk would otherwise evict the bench's pods), image
// garbage collection only on a full disk (so the imported images, which
// cannot be pulled again, stay), the host's kernel settings taken as they
// come (protectKernelDefaults false: kubelet sets its tunables; Down puts
// them back).
func renderKubeletConfig(l layout, containerdSocket string) []byte {
	cfg := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false,
		"cgroupDriver":             "cgroupfs",
		"containerRuntimeEndpoint": "unix://" + containerdSocket,
		"failSwapOn":               false,
		"memorySwap":               map[string]any{"swapBehavior": "NoSwap"},
		"evictionHard": map[string]string{
			"memory.available":   "100Mi",
			"nodefs.available":   "1%",
			"imagefs.available":  "1%",
			"nodefs.inodesFree":  "1%",
			"imagefs.inodesFree": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": false},
			"x509":      map[string]any{"clientCAFile": l.pki("ca.crt")},
		},
		"authorization": map[string]any{"mode": "AlwaysAllow"},
		// Kubelet's own default, -999, needs CAP_SYS_RESOURCE; 0 is
		// what it gets without it anyway, minus an error in its log.
		"oomScoreAdj":           0,
		"maxPods":               110,
		"resolvConf":            l.resolvConf(),
		"protectKernelDefaults": false,
		"podLogsDir":            l.podLogs(),
		"healthzBindAddress":    "127.0.0.1",
		"healthzPort":           10248,
		"readOnlyPort":          0,
		"serializeImagePulls":   false,
		// A crashing pod of a test is retried soon rather than after the
		// default 5 minute cap.
		"crashLoopBackOff":    map[string]any{"maxContainerRestartPeriod": "30s"},
		"shutdownGracePeriod": "0s",
		// Network sysctls are per pod (its own namespace); the bench's
		// servers set some (monolock-tfo: net.ipv4.tcp_fastopen).
		"allowedUnsafeSysctls": []string{"net.*"},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}
