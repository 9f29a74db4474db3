package localcluster

import (
	"net"
	"strconv"
)

// serviceAccountIssuer is the iss claim of service account tokens.
const serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// apiserverArgs are kube-apiserver's flags: serving on loopback only,
// client certificates from the cluster CA, Node and RBAC authorization,
// the default admission plugins plus NodeRestriction.
func apiserverArgs(l layout, port int, etcdURL string, hostIP net.IP) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + l.apiserverCertDir(),
		"--tls-cert-file=" + l.pki("apiserver.crt"),
		"--tls-private-key-file=" + l.pki("apiserver.key"),
		"--client-ca-file=" + l.pki("ca.crt"),
		"--kubelet-client-certificate=" + l.pki("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + l.pki("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + l.pki("service-account.key"),
		"--service-account-signing-key-file=" + l.pki("service-account.key"),
		"--service-cluster-ip-range=" + ServiceSubnet,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--profiling=false",
	}
	if hostIP != nil {
		// The kubernetes Service's endpoint; the apiserver listens on
		// loopback only, and no pod of the bench talks to it.
		args = append(args, "--advertise-address="+hostIP.String())
	} else {
		// A loopback endpoint is invalid: keep none.
		args = append(args, "--endpoint-reconciler-type=none")
	}
	return args
}

// controllerManagerArgs: each controller with a service account of its
// own, the service account token signer, no leader election (one
// member), and no node IPAM (CNI host-local hands out pod IPs).
func controllerManagerArgs(l layout) []string {
	kc := l.kubeconfig(compControllerManager)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--leader-elect=false",
		"--service-account-private-key-file=" + l.pki("service-account.key"),
		"--root-ca-file=" + l.pki("ca.crt"),
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file=" + l.pki("ca.crt"),
		"--cluster-signing-key-file=" + l.pki("ca.key"),
		"--service-cluster-ip-range=" + ServiceSubnet,
		"--allocate-node-cidrs=false",
		"--profiling=false",
	}
}

func schedulerArgs(l layout) []string {
	kc := l.kubeconfig(compScheduler)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--leader-elect=false",
		"--profiling=false",
	}
}

// kubeletArgs: the node's name and label, and every directory below the
// state dir (root dir: pods' volumes, plugins, its own certificates).
func kubeletArgs(l layout, hostIP net.IP) []string {
	args := []string{
		"--config=" + l.kubeletConfig(),
		"--kubeconfig=" + l.kubeconfig(compKubelet),
		"--root-dir=" + l.kubeletRoot(),
		"--hostname-override=" + NodeName,
		"--node-labels=" + NodeLabel + "=true",
	}
	if hostIP != nil {
		args = append(args, "--node-ip="+hostIP.String())
	}
	return args
}
