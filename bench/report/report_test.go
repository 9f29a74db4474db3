package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/monolock/monolock-bench/bench/results"
)

var update = flag.Bool("update", false, "rewrite testdata/results.json (synthetic fixture) and the golden files")

const fixturePath = "testdata/results.json"

// loadFixture returns the committed fixture; with -update it first
// regenerates it from fixture().
func loadFixture(t *testing.T) *results.Results {
	t.Helper()
	if *update {
		if err := fixture(t).Save(fixturePath); err != nil {
			t.Fatal(err)
		}
	}
	r, err := results.Load(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFixtureIsCurrent keeps the committed fixture in step with its
// generator, so the golden files always describe what fixture() builds.
func TestFixtureIsCurrent(t *testing.T) {
	want, err := fixture(t).Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) && !*update {
		t.Fatalf("%s differs from fixture(); run go test ./bench/report -update", fixturePath)
	}
}

func TestGolden(t *testing.T) {
	r := loadFixture(t)
	dir := filepath.Join("testdata", "golden")
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := Write(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	got := t.TempDir()
	if err := Write(got, r); err != nil {
		t.Fatal(err)
	}
	compareDirs(t, dir, got)
}

// compareDirs fails unless both directory trees hold the same files with
// the same bytes.
func compareDirs(t *testing.T, want, got string) {
	t.Helper()
	files := func(root string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[rel] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	w, g := files(want), files(got)
	for name, data := range w {
		other, ok := g[name]
		switch {
		case !ok:
			t.Errorf("%s: missing", name)
		case !bytes.Equal(data, other):
			t.Errorf("%s: differs from the golden file (run go test ./bench/report -update and review the diff)\n%s", name, firstDiff(data, other))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: not in the golden files", name)
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n want " + al[i] + "\n  got " + bl[i]
		}
	}
	return "lengths differ"
}
