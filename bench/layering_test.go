package bench

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The module's packages fall into groups, and imports between groups run
// one way: scenarios → run, load, faults, check, network → backends →
// host → core → results; output reads results and the analysis (which
// reads results only and imports no renderer); only
// cmd/monolock-bench imports the scenarios and the contenders. Tests are
// not held to it: a test may take what it needs. TestLayering holds every
// package's imports to the table below, so that an import running back up
// fails here.

// module is this module's path.
const module = "github.com/monolock/monolock-bench"

// layers maps a package, by its path below the module, to its group: an
// entry is the path itself or, ending in "/...", the path and every
// package below it; the longest matching entry wins. A package that no
// entry matches fails the test: a new package takes its place here first.
var layers = map[string]string{
	"bench":                "core",
	"bench/results":        "results",
	"bench/analysis":       "analysis",
	"bench/output/...":     "output",
	"bench/host":           "host",
	"bench/backend/...":    "backend",
	"bench/run":            "run",
	"bench/load/...":       "load",
	"bench/workload/...":   "load",
	"bench/faults/...":     "faults",
	"bench/network/...":    "network",
	"bench/check/...":      "check",
	"bench/benchtest":      "benchtest",
	"bench/scenarios/...":  "scenarios",
	"bench/contenders/...": "contenders",
	"redisbench/...":       "contenders",
	"cmd/monolock-bench":   "cmd",
	"docker/...":           "assets",
	"monolock/...":         "library",
	"cmd/monolock":         "commands",
	"cmd/monolockctl":      "commands",
	"cmd/tcpfloor":         "commands",
	"cmd/zkmember":         "commands",
}

// mayImport lists, for each group, the other groups its packages may
// import (a group's packages may always import each other). The command
// (cmd/monolock-bench) wires everything and may import any group. Every
// group of the bench may import the core and the results schema below it;
// beyond those, an entry is an edge the code uses or one that design.md's
// dependency rules name (scenarios → run and network, the fault tools and
// the network → backend), and nothing more: a new edge is a decision
// taken here.
var mayImport = map[string][]string{
	// The schema of results.json sits at the bottom: the core's types fill
	// it, and output reads it. It is the ground floor every layer imports
	// (bench/results, not under output/) and imports nothing of the module.
	"results": {},
	// The analysis turns results into the decision model; it renders
	// nothing and imports no renderer.
	"analysis": {"results"},
	// The renderers lay out the results and the analysis's model.
	"output": {"results", "analysis"},
	// The core: seam, table types, capabilities.
	"core": {"results"},
	// Probes of this machine.
	"host": {"core", "results"},
	// The backends start servers (a clock-shifted one under the clockshift
	// interposer, whose C source is an asset).
	"backend": {"core", "results", "host", "assets"},
	"run":     {"core", "results"},
	"load":    {"core", "results", "host"},
	// The checkers read histories only.
	"check": {"core", "results"},
	// The nemesis records its faults into a history.
	"faults":  {"core", "results", "backend", "check"},
	"network": {"core", "results", "backend"},
	// Test support: servers on a backend for the tests of other groups.
	"benchtest": {"core", "results", "backend"},
	"scenarios": {"core", "results", "host", "run", "load", "faults", "check", "network"},
	// A contender describes its servers (images, local commands) and
	// opens its client library.
	"contenders": {"core", "results", "backend", "assets", "library"},
	"assets":     {},
	// The lock service and its client import nothing of the bench.
	"library":  {},
	"commands": {"library"},
}

// layerOf returns the group of the package at path (below the module), or
// "" when no entry of layers matches it.
func layerOf(path string) string {
	best, group := -1, ""
	for entry, g := range layers {
		stem, tree := strings.CutSuffix(entry, "/...")
		if (path == stem || (tree && strings.HasPrefix(path, stem+"/"))) && len(entry) > best {
			best, group = len(entry), g
		}
	}
	return group
}

func TestLayerOf(t *testing.T) {
	for path, want := range map[string]string{
		"bench":                            "core",
		"bench/results":                    "results",
		"bench/analysis":                   "analysis",
		"bench/output/results":             "output",
		"bench/output/report":              "output",
		"bench/backend/containers/engine":  "backend",
		"bench/backend/clockshift":         "backend",
		"bench/faults/nemesis":             "faults",
		"bench/faults/addrmove":            "faults",
		"bench/load/sessions":              "load",
		"bench/contenders/etcd":            "contenders",
		"bench/contenders/monolockstandby": "contenders",
		"bench/runner":                     "", // not bench/run
		"bench/newthing":                   "",
		"cmd/monolock-bench":               "cmd",
		"cmd/other":                        "",
	} {
		if got := layerOf(path); got != want {
			t.Errorf("layerOf(%q) = %q, want %q", path, got, want)
		}
	}
	for g, deps := range mayImport {
		for _, d := range deps {
			if _, ok := mayImport[d]; !ok {
				t.Errorf("group %s may import %q, which is no group", g, d)
			}
		}
	}
}

// TestLayering lists every package of the module with its imports (not its
// tests') and holds them to mayImport.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		group := layerOf(pkg)
		if group == "" {
			t.Errorf("%s belongs to no group: give it one in layers (layering_test.go)", pkg)
			continue
		}
		if group == "cmd" {
			continue // the command wires every group
		}
		allowed := mayImport[group]
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue // std and third-party: see TestCoreDependsOnNoThirdParty
			}
			dg := layerOf(dep)
			if dg == group || slices.Contains(allowed, dg) {
				continue
			}
			t.Errorf("%s (%s) imports %s (%s): %s may import only %v", pkg, group, dep, dg, group, allowed)
		}
	}
}

// coreThirdParty are the only modules outside the standard library and this
// module that the core may link: the histogram of the results schema and
// the statistics (benchmath) of its summaries.
var coreThirdParty = []string{"github.com/HdrHistogram/hdrhistogram-go", "golang.org/x/perf/benchmath", "github.com/aclements/go-moremath"}

// TestCoreDependsOnNoThirdParty: the core links no backend's engine client,
// no lock client and no other third-party module but coreThirdParty.
func TestCoreDependsOnNoThirdParty(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/bench").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if dep, ok := strings.CutPrefix(p, module+"/"); ok {
			if g := layerOf(dep); g != "core" && g != "results" {
				t.Errorf("the core depends on %s (%s)", dep, g)
			}
			continue
		}
		if !slices.ContainsFunc(coreThirdParty, func(m string) bool { return p == m || strings.HasPrefix(p, m+"/") }) {
			t.Errorf("the core depends on %s", p)
		}
	}
}
