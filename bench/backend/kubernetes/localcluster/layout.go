package localcluster

import "path/filepath"

// DefaultStateDir is where a cluster keeps everything it writes, unless
// Options.StateDir says otherwise. This package owns the directory: Down
// removes it.
const DefaultStateDir = "/var/lib/monolock-bench/kubernetes"

// layout names the files and directories of a cluster's state dir. Every
// path a component writes is below it, so that Down finds all of it:
// containerd's root and state, kubelet's root dir and pod logs, etcd's
// data, the CNI IPAM store.
type layout struct{ dir string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}

// clusterFile records a started cluster (written last by Up).
func (l layout) clusterFile() string { return l.path("cluster.json") }

// hostFile records what Up found on the host before changing it.
func (l layout) hostFile() string { return l.path("host.json") }

func (l layout) pkiDir() string             { return l.path("pki") }
func (l layout) pki(name string) string     { return l.path("pki", name) }
func (l layout) logFile(name string) string { return l.path("logs", name+".log") }
func (l layout) pidFile(name string) string { return l.path("run", name+".pid") }

// kubeconfig is the kubeconfig file of a client: "admin" for users and
// tests, or a component's name.
func (l layout) kubeconfig(client string) string { return l.path("kubeconfig", client+".conf") }

func (l layout) etcdData() string { return l.path("etcd") }

func (l layout) containerdDir() string    { return l.path("containerd") }
func (l layout) containerdConfig() string { return l.path("containerd", "config.toml") }
func (l layout) containerdSocket() string { return l.path("containerd", "containerd.sock") }

func (l layout) cniConfDir() string { return l.path("cni", "net.d") }
func (l layout) cniIPAMDir() string { return l.path("cni", "ipam") }

func (l layout) apiserverCertDir() string { return l.path("apiserver") }

func (l layout) kubeletRoot() string   { return l.path("kubelet") }
func (l layout) kubeletConfig() string { return l.path("kubelet-config.json") }
func (l layout) podLogs() string       { return l.path("pod-logs") }
func (l layout) resolvConf() string    { return l.path("resolv.conf") }
