package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Everything of bench/ outside bench/contenders/ (the core package and
// the groups around it: run, load, host, backends, faults, output,
// scenarios) names no contender and imports no contender's client, so
// that adding one touches only its own package and a table line.
// layering_test.go holds the imports between the groups.

// contenderNames are the contenders' ids (and the spelling of one in
// identifiers). The project's own name, monolock-bench, is not one.
var contenderNames = []string{"monolock", "redis", "redlock", "etcd", "postgres", "tcp-floor", "tcpfloor", "redis-floor"}

// forbiddenImports are contender client libraries and contender packages.
var forbiddenImports = []string{
	"github.com/redis/go-redis", "github.com/go-redsync/redsync",
	"github.com/monolock/monolock-bench/monolock",
	"github.com/monolock/monolock-bench/redisbench",
	"github.com/monolock/monolock-bench/bench/contenders",
	"go.etcd.io/etcd", "github.com/jackc/pgx",
}

// allowed are mentions the results.json schema (version 1) fixes.
var allowed = map[string]bool{
	// The spec table's fixed name of the five-master clock-jump variant
	// (scripts read it); the scenario runs it for any contender whose
	// spec has five independent wall-clock servers.
	"clock-jump-redlock": true,
}

// projectName matches the project's name and module path in any spelling.
var projectName = regexp.MustCompile(`(?i)github\.com/monolock/monolock-bench|monolock[-_]bench`)

// localCluster builds a Kubernetes cluster for the kubernetes backend's
// tests: it names etcd as Kubernetes's own datastore (the apiserver's
// --etcd-servers), never the contender.
const localCluster = "backend/kubernetes/localcluster"

// coreDirs returns the directories of the contender-neutral packages,
// relative to bench/.
func coreDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		for _, skip := range []string{"contenders", "testdata"} {
			if path == skip || d.Name() == "testdata" {
				return filepath.SkipDir
			}
		}
		if path == localCluster {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// mentions returns the contender name in s, or "".
func mentions(s string, identifier bool) string {
	s = strings.ToLower(projectName.ReplaceAllString(s, ""))
	for _, n := range contenderNames {
		if identifier {
			if strings.Contains(s, strings.ReplaceAll(n, "-", "")) {
				return n
			}
			continue
		}
		if regexp.MustCompile(`(^|[^a-z0-9])` + regexp.QuoteMeta(n) + `([^a-z0-9]|$)`).MatchString(s) {
			return n
		}
	}
	return ""
}

func TestMentions(t *testing.T) {
	tests := []struct {
		s          string
		identifier bool
		want       string
	}{
		{"monolock", false, "monolock"},
		{"redis-server", false, "redis"},
		{"a monolock_waiters gauge", false, "monolock"},
		{"server tcp-floor", false, "tcp-floor"},
		{"org.monolock-bench.session", false, ""},
		{"MONOLOCK_BENCH_PUBLISH_PORTS", false, ""},
		{"github.com/monolock/monolock-bench/bench", false, ""},
		{"predis", false, ""},
		{"RoleRedis", true, "redis"},
		{"tcpFloorPort", true, "tcp-floor"},
		{"Session", true, ""},
	}
	for _, tt := range tests {
		if got := mentions(tt.s, tt.identifier); got != tt.want {
			t.Errorf("mentions(%q, %v) = %q, want %q", tt.s, tt.identifier, got, tt.want)
		}
	}
}

// TestCoreNamesNoContender parses every non-test file of the core: no
// string literal or identifier names a contender, no import is a
// contender's client or package.
func TestCoreNamesNoContender(t *testing.T) {
	fset := token.NewFileSet()
	for _, dir := range coreDirs(t) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, bad := range forbiddenImports {
					if p == bad || strings.HasPrefix(p, bad+"/") {
						t.Errorf("%s imports %s", fset.Position(imp.Pos()), p)
					}
				}
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ImportSpec:
					return false // checked above
				case *ast.BasicLit:
					if n.Kind != token.STRING {
						return true
					}
					s, _ := strconv.Unquote(n.Value)
					if name := mentions(s, false); name != "" && !allowed[s] {
						t.Errorf("%s: string %q names contender %s", fset.Position(n.Pos()), s, name)
					}
				case *ast.Ident:
					if name := mentions(n.Name, true); name != "" && !allowed[n.Name] {
						t.Errorf("%s: identifier %s names contender %s", fset.Position(n.Pos()), n.Name, name)
					}
				}
				return true
			})
		}
	}
}

// TestCoreDependsOnNoContenderClient asks the go tool for everything the
// core packages link: no contender's client library. Like the go list
// tests of layering_test.go it runs under -short too: go list takes a
// fraction of a second once the build cache is warm.
func TestCoreDependsOnNoContenderClient(t *testing.T) {
	var pkgs []string
	for _, dir := range coreDirs(t) {
		pkgs = append(pkgs, "./"+dir)
	}
	out, err := exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range forbiddenImports {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("the core depends on %s", p)
			}
		}
	}
}

// A cap kept for the suite's budget does not apply to a variant run on a
// budget of its own; the others do.
func TestCapSuiteOnly(t *testing.T) {
	c := Contender{Caps: []Cap{
		{Scenario: "chaos", Variant: "*", SuiteOnly: true, Reason: "budget"},
		{Scenario: "safety", Variant: "clock-jump*", Reason: "no lease"},
	}}
	for _, tt := range []struct {
		scenario string
		v        Variant
		quick    bool
		want     string
	}{
		{"chaos", Variant{Name: "soak"}, false, "capped: budget"},
		{"chaos", Variant{Name: "soak"}, true, "capped: budget"},
		{"chaos", Variant{Name: "soak", OwnBudget: true}, false, ""},
		{"safety", Variant{Name: "clock-jump", OwnBudget: true}, false, "capped: no lease"},
	} {
		if got := c.CapOf(tt.scenario, tt.v, tt.quick); got != tt.want {
			t.Errorf("CapOf(%s, %+v, quick %v) = %q, want %q", tt.scenario, tt.v.Name, tt.quick, got, tt.want)
		}
	}
}
