package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// The decision section's use-case rows, capability matrix and workload
// rankings, the "which lock when" leaderboards, the claims with their
// verdicts, and the scenario sections' readings (which figure, which
// variants, the rankings, the noise) are decided by bench/analysis; the files that lay them out only lay out. They name
// no ranking or judging helper of this package, no decision-figure
// declaration (what a capability is judged by), no claim rule (what a
// claim is checked by) and no claim verdict of their own, and import
// neither benchmath nor anything else that compares. That no file of the
// package looks a figure up is TestReportLooksNoFigureUp's.
func TestDecisionRowsAreLaidOutNotDecided(t *testing.T) {
	forbidden := map[string]string{
		"rank": "ranks", "ranked": "ranks", "noisy": "judges noise", "separable": "compares figures",
		"Decides": "reads the capability declarations", "DecisionFigure": "reads a capability declaration",
		"ClaimRule": "reads a claim rule", "Evaluate": "checks a claim",
		"ClaimHolds": "gives a claim its verdict", "ClaimFails": "gives a claim its verdict", "ClaimInconclusive": "gives a claim its verdict",
	}
	fset := token.NewFileSet()
	for _, name := range []string{"decision.go", "capabilities.go", "findings.go", "workload_rank.go", "claimkinds.go", "network_claims.go", "overview.go", "guidance.go", "networktargets.go", "openloop.go", "sections.go", "safety.go", "failover.go", "scale.go"} {
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "golang.org/x/perf/benchmath" {
				t.Errorf("%s imports %s: comparing figures is the analysis's", name, p)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.CallExpr:
				if id, ok := x.Fun.(*ast.Ident); ok {
					if why, bad := forbidden[id.Name]; bad {
						t.Errorf("%s: %s calls %s: it %s, which bench/analysis does", fset.Position(x.Pos()), name, id.Name, why)
					}
				}
			case *ast.SelectorExpr:
				if why, bad := forbidden[x.Sel.Name]; bad {
					// f.a.X is the analysis's; anything else is the renderer's own
					if inner, ok := x.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "a" {
						return true
					}
					t.Errorf("%s: %s uses .%s: it %s, which bench/analysis does", fset.Position(x.Pos()), name, x.Sel.Name, why)
				}
			}
			return true
		})
	}
}
