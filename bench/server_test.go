package bench

import "testing"

func TestSpecs(t *testing.T) {
	a, b := &ServerSpec{Name: "a", Replicas: 3}, &ServerSpec{Name: "b"}
	specs, err := Specs([]Contender{{Name: "x", Server: a}, {Name: "y", Server: b}, {Name: "z", Server: a}})
	if err != nil || len(specs) != 2 || specs[0] != a || specs[1] != b {
		t.Fatalf("Specs = %v, %v; want a, b once each", specs, err)
	}
	if _, err := Specs([]Contender{{Name: "x", Server: a}, {Name: "y", Server: &ServerSpec{Name: "a"}}}); err == nil {
		t.Fatal("two different specs named a were accepted")
	}
	if _, err := Specs([]Contender{{Name: "x"}}); err == nil {
		t.Fatal("a contender without a spec was accepted")
	}
	if a.ServerName(1) != "a-2" || b.ServerName(0) != "b" || b.FlagStem() != "b" {
		t.Fatalf("names %q %q %q", a.ServerName(1), b.ServerName(0), b.FlagStem())
	}
}
