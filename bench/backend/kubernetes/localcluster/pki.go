package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is how long the cluster's certificates are valid: far
// beyond any bench run, so a long-lived cluster never sees one expire.
const certValidity = 5 * 365 * 24 * time.Hour

// client is one identity that talks to the apiserver with a client
// certificate and, unless it is the apiserver itself, a kubeconfig.
type client struct {
	// name names its files: pki/<name>.crt, kubeconfig/<name>.conf.
	name string
	// user and groups become the certificate's CN and O, which the
	// apiserver reads as the user name and groups.
	user   string
	groups []string
	// kubeconfig is false for the apiserver's own client certificate
	// (the one it presents to kubelets).
	kubeconfig bool
}

// clients are the identities of the cluster: an admin in system:masters
// for users and tests, one per component so RBAC and the Node authorizer
// grant each what it needs, and the apiserver's to kubelets.
var clients = []client{
	{name: "admin", user: "monolock-bench-admin", groups: []string{"system:masters"}, kubeconfig: true},
	{name: "kube-controller-manager", user: "system:kube-controller-manager", kubeconfig: true},
	{name: "kube-scheduler", user: "system:kube-scheduler", kubeconfig: true},
	{name: "kubelet", user: "system:node:" + NodeName, groups: []string{"system:nodes"}, kubeconfig: true},
	{name: "apiserver-kubelet-client", user: "kube-apiserver-kubelet-client", groups: []string{"system:masters"}},
}

// writePKI creates, in the state dir, a CA, the apiserver's serving
// certificate (valid for the loopback address, the service range's first
// address and the names of the kubernetes Service), a client certificate
// and kubeconfig per client (clients), and the service account signing
// key.
func writePKI(l layout, server string, hostIPs []net.IP) error {
	if err := os.MkdirAll(l.pkiDir(), 0o700); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(l.kubeconfig("admin")), 0o700); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "monolock-bench-kubernetes-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("localcluster: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := writePair(l, "ca", caDER, caKey); err != nil {
		return err
	}

	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: append([]net.IP{net.IPv4(127, 0, 0, 1), net.ParseIP(serviceIP)}, hostIPs...),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := issue(l, "apiserver", serving, ca, caKey); err != nil {
		return err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for _, c := range clients {
		t := &x509.Certificate{
			Subject:     pkix.Name{CommonName: c.user, Organization: c.groups},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := issue(l, c.name, t, ca, caKey); err != nil {
			return err
		}
		if !c.kubeconfig {
			continue
		}
		certPEM, err := os.ReadFile(l.pki(c.name + ".crt"))
		if err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
		keyPEM, err := os.ReadFile(l.pki(c.name + ".key"))
		if err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
		b, err := renderKubeconfig(server, c.user, caPEM, certPEM, keyPEM)
		if err != nil {
			return err
		}
		if err := os.WriteFile(l.kubeconfig(c.name), b, 0o600); err != nil {
			return fmt.Errorf("localcluster: %w", err)
		}
	}

	// RSA for the service account tokens (RS256), the algorithm every
	// token consumer takes.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return writeKey(l.pki("service-account.key"), saKey)
}

// issue signs template with the CA and writes pki/<name>.crt and .key.
func issue(l layout, name string, template, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	template.SerialNumber = serial()
	template.NotBefore = ca.NotBefore
	template.NotAfter = ca.NotAfter
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("localcluster: certificate %s: %w", name, err)
	}
	return writePair(l, name, der, key)
}

func writePair(l layout, name string, der []byte, key crypto.Signer) error {
	if err := os.WriteFile(l.pki(name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return writeKey(l.pki(name+".key"), key)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("localcluster: %w", err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

// renderKubeconfig returns a self-contained kubeconfig (certificates
// inline, []byte marshalling to the base64 the *-data fields want) in
// JSON, which kubectl and the components read as a subset of YAML.
func renderKubeconfig(server, user string, caPEM, certPEM, keyPEM []byte) ([]byte, error) {
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "monolock-bench",
		"clusters": []map[string]any{{
			"name": "monolock-bench",
			"cluster": map[string]any{
				"server":                     server,
				"certificate-authority-data": caPEM,
			},
		}},
		"users": []map[string]any{{
			"name": user,
			"user": map[string]any{
				"client-certificate-data": certPEM,
				"client-key-data":         keyPEM,
			},
		}},
		"contexts": []map[string]any{{
			"name":    "monolock-bench",
			"context": map[string]any{"cluster": "monolock-bench", "user": user},
		}},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("localcluster: kubeconfig: %w", err)
	}
	return append(b, '\n'), nil
}
