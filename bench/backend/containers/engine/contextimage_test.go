package engine

import (
	"archive/tar"
	"bytes"
	"io"
	"testing"
)

func TestContextArchive(t *testing.T) {
	files := []ContextFile{
		{Name: "pgdata/data/PG_VERSION", Mode: 0o600, Content: []byte("15\n")},
		{Name: "pgdata/data", Mode: 0o700, Dir: true},
		{Name: "pgdata/data/pg_notify", Mode: 0o700, Dir: true},
		{Name: "Dockerfile", Mode: 0o644, Content: []byte("FROM scratch\n")},
	}
	archive, err := contextArchive(files)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		mode int64
		dir  bool
	}
	got := map[string]entry{}
	var order []string
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[h.Name]; dup {
			t.Errorf("%s twice", h.Name)
		}
		got[h.Name] = entry{h.Mode, h.Typeflag == tar.TypeDir}
		order = append(order, h.Name)
	}
	want := map[string]entry{
		"Dockerfile":             {0o644, false},
		"pgdata/":                {0o755, true},
		"pgdata/data/":           {0o700, true},
		"pgdata/data/PG_VERSION": {0o600, false},
		"pgdata/data/pg_notify/": {0o700, true},
	}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", order, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v (entries %v)", name, got[name], w, order)
		}
	}
	// Order of the input does not matter.
	reversed := []ContextFile{files[3], files[2], files[1], files[0]}
	a, _ := ContentTag(files)
	b, _ := ContentTag(reversed)
	if a != b || len(a) != 20 {
		t.Errorf("ContentTag %q and %q for the same files", a, b)
	}
}
