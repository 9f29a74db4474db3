package results

import "testing"

// TestUnderNetwork: one run under two profiles summarises each variant
// per profile, and UnderNetwork gives each profile's figures back under
// the plain variant names; FirstNetwork leaves a run without profiles as
// it is.
func TestUnderNetwork(t *testing.T) {
	m := func(v float64) []Metric { return []Metric{{Name: "acquire_p50", Unit: "us", Value: v}} }
	raw := []Raw{
		{Scenario: "latency", Contender: "a", Variant: "w1", Repetition: 1, Metrics: m(50)},
		{Scenario: "latency", Contender: "a", Variant: "w1" + NetworkSuffix + "az", Network: "az", Repetition: 1, Metrics: m(1000)},
		{Scenario: "latency", Contender: "a", Variant: "w1" + NetworkSuffix + "az", Network: "az", Repetition: 2, Metrics: m(1100)},
	}
	r := &Results{Raw: raw, Summary: Summarize(raw), Networks: []NetworkRun{{Profile: "loopback"}, {Profile: "az", AskedRTTUS: 1000}}}
	if len(r.Summary) != 2 || r.Summary[1].Network != "az" || r.Summary[1].N != 2 {
		t.Fatalf("summary %+v: want one row per profile, the az one of 2 repetitions", r.Summary)
	}
	az := r.UnderNetwork(r.Networks[1].Label())
	if len(az.Summary) != 1 || az.Summary[0].Variant != "w1" || az.Summary[0].Median != 1050 || len(az.Raw) != 2 || az.Raw[0].Variant != "w1" {
		t.Fatalf("under az: summary %+v, raw %d", az.Summary, len(az.Raw))
	}
	first := r.FirstNetwork()
	if len(first.Summary) != 1 || first.Summary[0].Median != 50 {
		t.Fatalf("first network: %+v", first.Summary)
	}
	if r.Raw[1].Variant != "w1@az" {
		t.Fatal("UnderNetwork changed the run it was given")
	}
	plain := &Results{Raw: raw[:1], Summary: Summarize(raw[:1])}
	if plain.FirstNetwork() != plain {
		t.Fatal("a run without profiles is not its own first network")
	}
	// The profile comes from the records, not from the variant's
	// spelling: an @ in a loopback variant's name stays.
	at := []Raw{{Scenario: "workload", Contender: "a", Variant: "jobs@night", Repetition: 1, Metrics: m(50)}}
	loop := (&Results{Raw: at, Summary: Summarize(at)}).UnderNetwork("")
	if loop.Raw[0].Variant != "jobs@night" || loop.Summary[0].Variant != "jobs@night" {
		t.Errorf("loopback variant jobs@night read as %q, %q", loop.Raw[0].Variant, loop.Summary[0].Variant)
	}
}
