package analysis

// A WorkloadRecord is what one lock's records of a workload file say
// beside its figures: the warnings of the repetitions that ran, and how
// many measured requests the stop cut off.
type WorkloadRecord struct {
	Contender string
	// Ran says whether some repetition was not skipped; Warnings are
	// theirs, in repetition order.
	Ran      bool
	Warnings []string
	// Cut counts the measured requests cut off by the stop or never
	// started, of Requests.
	Cut, Requests int64
}

// WorkloadRecords reads the records of every lock of the workload
// scenario's variant (one workload file).
func (run *Run) WorkloadRecords(variant string) []WorkloadRecord {
	var out []WorkloadRecord
	for _, c := range run.locksIn("workload") {
		rec := WorkloadRecord{Contender: c}
		for _, raw := range run.raws[rawKey{"workload", c, variant}] {
			rec.Cut += raw.Counts["censored"] + raw.Counts["unstarted"]
			rec.Requests += raw.Counts["requests"]
			if raw.Skipped != "" {
				continue
			}
			rec.Ran = true
			rec.Warnings = append(rec.Warnings, raw.Warnings...)
		}
		out = append(out, rec)
	}
	return out
}
