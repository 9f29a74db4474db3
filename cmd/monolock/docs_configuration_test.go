package main

// The contract of the public docs pages operations/configuration.mdx (the
// flag table and the example in its two forms), operations/observability.md
// (the diagnostic log: UTC, RFC 3339) and operations/deployment.mdx (the
// image's ports and environment variables).

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/docker"
)

// docsFlags is the configuration page's table: flag, environment
// variable, default.
var docsFlags = [][3]string{
	{"listen", "MONOLOCK_LISTEN_ADDRESS", "0.0.0.0:7070"},
	{"ops-listen", "MONOLOCK_OPS_LISTEN_ADDRESS", ""},
	{"admin-listen", "MONOLOCK_ADMIN_LISTEN_ADDRESS", ""},
	{"tls-cert", "MONOLOCK_TLS_CERT", ""},
	{"tls-key", "MONOLOCK_TLS_KEY", ""},
	{"tls-client-ca", "MONOLOCK_TLS_CLIENT_CA", ""},
	{"acl-file", "MONOLOCK_ACL_FILE", ""},
	{"audit-log", "MONOLOCK_AUDIT_LOG", ""},
	{"io-timeout", "MONOLOCK_IO_TIMEOUT", "5s"},
	{"log-level", "MONOLOCK_LOG_LEVEL", "info"},
	{"log-format", "MONOLOCK_LOG_FORMAT", "text"},
}

func TestDocsFlagTable(t *testing.T) {
	// Every documented flag, in the documented order; flags the page does
	// not list (-tcp-fastopen) may stand between them.
	var got [][3]string
	for _, o := range options() {
		if slices.ContainsFunc(docsFlags, func(f [3]string) bool { return f[0] == o.flag }) {
			got = append(got, [3]string{o.flag, o.env, o.def})
		}
	}
	if !slices.Equal(got, docsFlags) {
		t.Fatalf("flags %v,\nwant the documented %v", got, docsFlags)
	}
	var help bytes.Buffer
	parseSettings([]string{"-h"}, func(string) string { return "" }, &help)
	for _, f := range docsFlags {
		if !strings.Contains(help.String(), "-"+f[0]) || !strings.Contains(help.String(), f[1]) {
			t.Errorf("-h does not list -%s with %s", f[0], f[1])
		}
	}
}

// TestDocsExampleBothForms: the page's example as flags and as
// environment variables gives the same settings; a flag beats its
// variable.
func TestDocsExampleBothForms(t *testing.T) {
	flags := strings.Fields(`-listen 0.0.0.0:7070 -ops-listen 0.0.0.0:9090 -admin-listen 127.0.0.1:7071
	  -tls-cert /etc/monolock/server.crt -tls-key /etc/monolock/server.key
	  -tls-client-ca /etc/monolock/clients-ca.crt -acl-file /etc/monolock/acl.json
	  -audit-log /var/log/monolock/audit.jsonl -log-format json`)
	env := map[string]string{
		"MONOLOCK_LISTEN_ADDRESS":       "0.0.0.0:7070",
		"MONOLOCK_OPS_LISTEN_ADDRESS":   "0.0.0.0:9090",
		"MONOLOCK_ADMIN_LISTEN_ADDRESS": "127.0.0.1:7071",
		"MONOLOCK_TLS_CERT":             "/etc/monolock/server.crt",
		"MONOLOCK_TLS_KEY":              "/etc/monolock/server.key",
		"MONOLOCK_TLS_CLIENT_CA":        "/etc/monolock/clients-ca.crt",
		"MONOLOCK_ACL_FILE":             "/etc/monolock/acl.json",
		"MONOLOCK_AUDIT_LOG":            "/var/log/monolock/audit.jsonl",
		"MONOLOCK_LOG_FORMAT":           "json",
	}
	none := func(string) string { return "" }
	fromFlags, err := parseSettings(flags, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := parseSettings(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if fromFlags != fromEnv {
		t.Fatalf("flags give %+v,\nthe environment %+v", fromFlags, fromEnv)
	}
	if fromFlags.ioTimeout != 5*time.Second || fromFlags.aclFile != "/etc/monolock/acl.json" {
		t.Fatalf("settings %+v", fromFlags)
	}
	both, err := parseSettings([]string{"-log-format", "text"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || both.logFormat != "text" {
		t.Fatalf("flag against env: %+v, %v", both, err)
	}
}

// TestDocsLogTimestamps: "Timestamps are UTC, RFC 3339", in both formats.
func TestDocsLogTimestamps(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		var out bytes.Buffer
		newLogger(settings{logFormat: format}, &out).Info("hello")
		var stamp string
		if format == "json" {
			var m struct{ Time string }
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			stamp = m.Time
		} else if m := regexp.MustCompile(`^time=(\S+) `).FindStringSubmatch(out.String()); m != nil {
			stamp = m[1]
		}
		ts, err := time.Parse(time.RFC3339Nano, stamp)
		if err != nil || !strings.HasSuffix(stamp, "Z") || time.Since(ts).Abs() > time.Minute {
			t.Errorf("%s log time %q (%v): want UTC RFC 3339 of now", format, stamp, err)
		}
	}
}

// TestDocsDeploymentImage: the server image declares the documented ports
// (protocol 7070, ops 9090, admin 7071) and sets only documented variables.
func TestDocsDeploymentImage(t *testing.T) {
	m := regexp.MustCompile(`(?m)^EXPOSE (.*)$`).FindStringSubmatch(docker.Monolock)
	if m == nil || strings.Join(strings.Fields(m[1]), " ") != "7070 9090 7071" {
		t.Fatalf("EXPOSE %v, want 7070 9090 7071", m)
	}
	known := map[string]string{}
	for _, f := range docsFlags {
		known[f[1]] = f[2]
	}
	for _, v := range regexp.MustCompile(`(MONOLOCK_[A-Z_]+)=(\S+)`).FindAllStringSubmatch(docker.Monolock, -1) {
		def, ok := known[v[1]]
		if !ok || def != v[2] {
			t.Errorf("the image sets %s=%s; want a documented variable at its documented default", v[1], v[2])
		}
	}
}
