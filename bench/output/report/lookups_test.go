package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// resultsLookups are the ways to find a figure in a run by its
// scenario, variant, contender or metric name: bench/results's lookups
// (Results.Scenario, ScenarioInfo.Variant and .Metric, Raw.Metric and
// .Figure, Results.UnderNetwork), the summary rows and raw records they
// search, and this package's own lookups built on them. bench/analysis
// finds figures; the report takes its readings.
var resultsLookups = map[string]string{
	"Scenario": "Results.Scenario", "Variant": "ScenarioInfo.Variant", "Metric": "ScenarioInfo.Metric or Raw.Metric",
	"Figure": "Raw.Figure", "UnderNetwork": "Results.UnderNetwork",
	"row": "a summary row by names", "raws": "raw records by names", "values": "a figure's values by names",
	"histogram": "a histogram by names", "params": "a variant's parameters by names",
	"variants": "a scenario's variants by name", "variantsWhere": "a scenario's variants by name",
	"scenarioContenders": "a scenario's contenders by name",
}

// resultsRecords are the fields holding every figure of a run; reading
// them is looking a figure up.
var resultsRecords = map[string]bool{"Summary": true, "Raw": true}

// No file of the report looks a figure up: it lays out what
// bench/analysis read.
func TestReportLooksNoFigureUp(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
					if what, bad := resultsLookups[sel.Sel.Name]; bad {
						t.Errorf("%s calls .%s: it looks up %s, which bench/analysis does", fset.Position(x.Pos()), sel.Sel.Name, what)
					}
				}
			case *ast.SelectorExpr:
				if resultsRecords[x.Sel.Name] {
					t.Errorf("%s reads .%s: it searches the run's figures, which bench/analysis does", fset.Position(x.Pos()), x.Sel.Name)
				}
			}
			return true
		})
	}
}
