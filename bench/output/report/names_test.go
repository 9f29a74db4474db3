package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// contenderName matches the name of a contender, of its family or of its
// client library; "monolock-bench", the tool's own name, is removed first.
var contenderName = regexp.MustCompile(`(?i)\b(monolock|redis|redlock|redsync|etcd|postgres|postgresql|tcp-floor|redis-floor)\b`)

// The report and compare know no contender by name: floors, families,
// colours and claims come from results.json. A string literal or
// identifier naming one in their code (tests aside) fails this test.
func TestNoContenderNames(t *testing.T) {
	for _, dir := range []string{".", "../compare"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			file.Imports = nil // import paths name the module
			ast.Inspect(file, func(n ast.Node) bool {
				var text string
				switch x := n.(type) {
				case *ast.ImportSpec:
					return false
				case *ast.BasicLit:
					if x.Kind != token.STRING {
						return true
					}
					text = strings.ReplaceAll(x.Value, "monolock-bench", "")
				case *ast.Ident:
					text = camelWords.ReplaceAllString(x.Name, "$1 $2")
				default:
					return true
				}
				if m := contenderName.FindString(text); m != "" {
					t.Errorf("%s: names the contender %q: %s", fset.Position(n.Pos()), m, text)
				}
				return true
			})
		}
	}
}

// camelWords splits identifiers like redisFloor into words.
var camelWords = regexp.MustCompile(`([a-z0-9])([A-Z])`)
