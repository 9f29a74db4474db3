package bench

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

// notMetrics are the string literals, by file below the module, that
// spell a metric's name but mean something else: a column heading, a
// per-client count, a workload file's key, a load outcome.
var notMetrics = map[string][]string{
	"bench/load/engine.go":                 {"failed"},         // an outcome
	"bench/output/report/chaos.go":         {"operations"},     // a column heading
	"bench/analysis/openloop.go":           {"p50"},            // a percentile's label
	"bench/analysis/sections.go":           {"grants"},         // a client's count
	"bench/analysis/troubles.go":           {"failures"},       // a record's count
	"bench/output/report/charts.go":        {"grants"},         // a client's count, an axis
	"bench/workload/parse.go":              {"workers", "p50"}, // a file's keys
	"bench/workload/parse_distribution.go": {"max", "p50"},     // a file's keys
}

// TestNoMetricLiterals: a metric is named by its descriptor in results
// (results.<Scenario>Metrics), not by a string, everywhere but in the
// scenario that records it: a renamed metric then breaks the build, not
// a report. Comments and struct tags are not code and are not read.
func TestNoMetricLiterals(t *testing.T) {
	names := map[string]bool{}
	for _, list := range [][]results.MetricSpec{
		results.LatencyMetrics.List(), results.ThroughputMetrics.List(), results.HandoverMetrics.List(),
		results.FairnessMetrics.List(), results.SafetyMetrics.List(), results.FailoverMetrics.List(),
		results.ScaleMetrics.List(), results.ChaosMetrics.List(), results.WorkloadMetrics.List(),
	} {
		for _, m := range list {
			names[m.Name] = true
		}
	}
	excused := map[string]bool{}
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if path != root && strings.HasPrefix(d.Name(), ".") || rel == "bench/scenarios" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "bench/results/metrics_") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				n.Tag = nil // a struct tag is not a name in code
			case *ast.BasicLit:
				s, err := strconv.Unquote(n.Value)
				switch {
				case err != nil || n.Kind != token.STRING || !names[s]:
				case slices.Contains(notMetrics[rel], s):
					excused[rel+" "+s] = true
				default:
					t.Errorf("%s: the metric %q by a literal: name it by its results descriptor", rel, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, literals := range notMetrics {
		for _, s := range literals {
			if !excused[file+" "+s] {
				t.Errorf("notMetrics: %s has no %q any more: take it off the list", file, s)
			}
		}
	}
}
