package acl

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const example = `{
  "rules": [
    {"identity": "spiffe://example.org/ns/prod/*", "locks": ["prod/*", "shared"]},
    {"identity": "batch-?.workers.internal",      "locks": ["jobs/*"]},
    {"identity": "admin",                          "locks": ["*"]},
    {"identity": "spiffe://example.org/ns/prod/sa/reports", "locks": ["reports/daily"]}
  ]
}`

func TestAllowed(t *testing.T) {
	a, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != 4 {
		t.Fatalf("Len() = %d, want 4", a.Len())
	}
	tests := []struct {
		identity, lock string
		want           bool
	}{
		{"spiffe://example.org/ns/prod/sa/api", "prod/db", true},
		{"spiffe://example.org/ns/prod/sa/api", "prod/db/migrate", true},
		{"spiffe://example.org/ns/prod/sa/api", "shared", true},
		{"spiffe://example.org/ns/prod/sa/api", "shared2", false},
		{"spiffe://example.org/ns/prod/sa/api", "jobs/x", false},
		{"spiffe://example.org/ns/prod/sa/api", "reports/daily", false},
		// Union: the reports identity matches two rules and gets both grants.
		{"spiffe://example.org/ns/prod/sa/reports", "reports/daily", true},
		{"spiffe://example.org/ns/prod/sa/reports", "prod/x", true},
		{"spiffe://example.org/ns/dev/sa/api", "prod/db", false},
		{"batch-1.workers.internal", "jobs/nightly", true},
		{"batch-12.workers.internal", "jobs/nightly", false},
		{"admin", "anything/at/all", true},
		{"Admin", "x", false},
		{"", "shared", false},
		{"unknown", "shared", false},
	}
	for _, tt := range tests {
		if got := a.Allowed(tt.identity, tt.lock); got != tt.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", tt.identity, tt.lock, got, tt.want)
		}
	}
}

func TestEmptyRulesDenyEverything(t *testing.T) {
	a, err := Parse([]byte(`{"rules": []}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Allowed("admin", "x") {
		t.Fatal("an empty rule list allowed a lock")
	}
	var zero *ACL
	if zero.Allowed("admin", "x") || zero.Len() != 0 {
		t.Fatal("a nil ACL allowed a lock")
	}
}

func TestAnyIdentityIncludingEmpty(t *testing.T) {
	a, err := Parse([]byte(`{"rules": [{"identity": "*", "locks": ["public/*"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Allowed("", "public/a") || !a.Allowed("x", "public/a") || a.Allowed("x", "private") {
		t.Fatal(`identity "*" must match every identity, the empty one included, and nothing else than its locks`)
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, doc, wantText string
	}{
		{"not json", `rules: []`, "invalid character"},
		{"empty document", ``, "EOF"},
		{"missing rules", `{}`, `missing "rules"`},
		{"null rules", `{"rules": null}`, `missing "rules"`},
		{"rules not a list", `{"rules": {}}`, "cannot unmarshal"},
		{"no identity", `{"rules": [{"locks": ["a"]}]}`, "rule 0: no identity"},
		{"empty identity", `{"rules": [{"identity": "", "locks": ["a"]}]}`, "rule 0: no identity"},
		{"no locks", `{"rules": [{"identity": "a"}]}`, `rule 0 (identity "a"): no lock patterns`},
		{"empty locks", `{"rules": [{"identity": "a", "locks": []}]}`, "no lock patterns"},
		{"empty lock pattern", `{"rules": [{"identity": "a", "locks": ["x", ""]}]}`, "lock pattern 1 is empty"},
		{"second rule bad", `{"rules": [{"identity": "a", "locks": ["x"]}, {"identity": "b"}]}`, "rule 1"},
		{"typo in field", `{"rules": [{"identity": "a", "lock": ["x"]}]}`, `unknown field "lock"`},
		{"unknown top-level field", `{"rules": [], "default": "allow"}`, `unknown field "default"`},
		{"trailing data", `{"rules": []} {"rules": []}`, "trailing data"},
		{"locks not strings", `{"rules": [{"identity": "a", "locks": [1]}]}`, "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse accepted %s: %+v", tt.doc, a)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not mention %q", err, tt.wantText)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFileReloadKeepsRulesOnFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acl.json")
	writeFile(t, path, `{"rules": [{"identity": "a", "locks": ["one"]}]}`)
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Path() != path || !f.Allowed("a", "one") || f.Allowed("a", "two") {
		t.Fatal("initial rules not in force")
	}

	writeFile(t, path, `{"rules": [{"identity": "a"}]}`)
	if err := f.Reload(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Reload of a broken file = %v, want ErrInvalid naming the path", err)
	}
	if !f.Allowed("a", "one") {
		t.Fatal("a failed reload dropped the previous rules")
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := f.Reload(); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Reload of a missing file = %v, want fs.ErrNotExist", err)
	}
	if !f.Allowed("a", "one") {
		t.Fatal("a failed reload dropped the previous rules")
	}

	writeFile(t, path, `{"rules": [{"identity": "a", "locks": ["two"]}]}`)
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if f.Allowed("a", "one") || !f.Allowed("a", "two") || f.ACL().Len() != 1 {
		t.Fatal("a good reload did not replace the rules")
	}
}

func TestOpenFileRefusesBrokenFile(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFile(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenFile(missing) = %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	writeFile(t, bad, `{"rules": [{"locks": ["x"]}]}`)
	if _, err := OpenFile(bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("OpenFile(bad) = %v", err)
	}
}
