package acl

// The contract of the public docs page operations/acl.mdx: its example
// file and its table of results, verbatim. The denial itself (ERROR 0x18,
// the counter, the info-level log line, the audit event) is tested end to
// end in monolock/server (TestACLAllowsAndDenies and docs_audit_test.go).

import "testing"

const docsACLExample = `{
  "rules": [
    { "identity": "spiffe://prod/worker/*", "locks": ["nightly/*", "shard-?"] },
    { "identity": "admin.svc.cluster.local", "locks": ["*"] }
  ]
}`

func TestDocsACLExample(t *testing.T) {
	a, err := Parse([]byte(docsACLExample))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		identity, lock string
		allowed        bool
	}{
		{"spiffe://prod/worker/7", "nightly/import", true},
		{"spiffe://prod/worker/7", "shard-3", true},
		{"spiffe://prod/worker/7", "shard-31", false},
		{"admin.svc.cluster.local", "anything", true},
		{"admin.svc.cluster.local", "nightly/a/b", true},
		{"spiffe://staging/worker/1", "nightly/import", false},
		// "The star crosses the slash": nightly/* matches nightly/a/b.
		{"spiffe://prod/worker/7", "nightly/a/b", true},
		// Deny by default; case sensitive, no normalisation.
		{"", "nightly/import", false},
		{"spiffe://prod/worker/7", "Nightly/import", false},
	} {
		if got := a.Allowed(tt.identity, tt.lock); got != tt.allowed {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.identity, tt.lock, got, tt.allowed)
		}
	}
	// "A rule that can never permit a lock is a configuration error."
	for _, bad := range []string{
		`{"rules":[{"identity":"x","locks":[]}]}`,
		`{"rules":[{"identity":"","locks":["*"]}]}`,
	} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) accepted a rule that can never permit a lock", bad)
		}
	}
}
