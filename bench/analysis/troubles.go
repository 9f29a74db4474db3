package analysis

// A Trouble is one repetition's record of failed cycles, given-up or
// lost locks, or errors.
type Trouble struct {
	Scenario, Variant, Contender string
	Repetition                   int
	// Counts are the counts above zero among failures, gave_up and lost,
	// in that order.
	Counts []TroubleCount
	Errors []string
}

// A TroubleCount is one count of a Trouble: "lost", 3.
type TroubleCount struct {
	Name string
	N    int64
}

// Troubles lists every record with a failure, a loss or an error, in
// the run's order.
func (run *Run) Troubles() []Trouble {
	var out []Trouble
	for _, x := range run.r.Raw {
		t := Trouble{Scenario: x.Scenario, Variant: x.Variant, Contender: x.Contender, Repetition: x.Repetition, Errors: x.Errors}
		for _, k := range []string{"failures", "gave_up", "lost"} {
			if n := x.Counts[k]; n > 0 {
				t.Counts = append(t.Counts, TroubleCount{k, n})
			}
		}
		if len(t.Counts) > 0 || len(t.Errors) > 0 {
			out = append(out, t)
		}
	}
	return out
}
