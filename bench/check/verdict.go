package check

import (
	"maps"
	"path/filepath"
	"slices"
	"time"
)

// Validity is a checker's verdict, as Jepsen's :valid?.
type Validity string

// Verdicts.
const (
	Valid   Validity = "valid"
	Invalid Validity = "invalid"
	// Unknown: the checker could not decide (porcupine timed out; no
	// final read of the counter; stale writes of unknown outcome).
	Unknown Validity = "unknown"
)

// worst returns Invalid if any is, else Unknown if any is, else Valid.
func worst(vs ...Validity) Validity {
	w := Valid
	for _, v := range vs {
		switch {
		case v == Invalid:
			return Invalid
		case v == Unknown:
			w = Unknown
		}
	}
	return w
}

// Names of the chaos scenario's two stores and of the harness's reader of
// final values; the checkers take any store names.
const (
	StoreFenced   = "fenced"
	StoreUnfenced = "unfenced"
	FinalProcess  = "final"
)

// Options configures Check.
type Options struct {
	// Name names the history (the contender); it prefixes visualisation
	// files.
	Name string
	// FencedStores are the stores whose register follows the fenced
	// model; nil means StoreFenced alone.
	FencedStores []string
	// LinearizabilityTimeout bounds porcupine per store; zero means
	// DefaultLinearizabilityTimeout.
	LinearizabilityTimeout time.Duration
	// VisualizationDir is the folder for porcupine's visualisation of a
	// store whose register is not linearizable, as <Name>-<store>.html;
	// "" writes none.
	VisualizationDir string
}

// FaultCounts counts a history's faults.
type FaultCounts struct {
	// Applied counts the faults applied; ByKind splits them.
	Applied int            `json:"applied"`
	ByKind  map[string]int `json:"by_kind"`
	// Skipped counts the faults not done because the contender or backend
	// cannot (per kind), with the first reason given for each kind.
	Skipped     map[string]int    `json:"skipped,omitempty"`
	SkipReasons map[string]string `json:"skip_reasons,omitempty"`
	// Failed counts the faults whose application failed.
	Failed int `json:"failed"`
}

// StoreVerdict is the verdict on one store.
type StoreVerdict struct {
	Store           string          `json:"store"`
	Valid           Validity        `json:"valid"`
	Linearizability Linearizability `json:"linearizability"`
	StaleWrites     StaleWrites     `json:"stale_writes"`
	LostUpdates     LostUpdates     `json:"lost_updates"`
	// Rate is of the applied faults with a stale write this store
	// accepted or a duplicate increment in it attributed to them;
	// RateByKind per fault kind.
	Rate       Rate            `json:"rate"`
	RateByKind map[string]Rate `json:"rate_by_kind"`
	// StaleRate is of the applied faults with a stale write this store
	// accepted attributed to them (lost increments left out);
	// StaleRateByKind per fault kind.
	StaleRate       Rate            `json:"stale_rate"`
	StaleRateByKind map[string]Rate `json:"stale_rate_by_kind"`
}

// Verdict is every checker's verdict on one history (one contender), in
// the checkers' terms: times on the history's clock, findings with the
// operations they rest on. The chaos scenario writes it into results.json
// as a results.ChaosVerdict and the chaos metrics, the file's schema,
// which must keep reading the runs of earlier versions of the checkers.
type Verdict struct {
	Name  string   `json:"name"`
	Valid Validity `json:"valid"`
	// Operations counts the client operations invoked (the harness's
	// final reads not included).
	Operations int         `json:"operations"`
	Faults     FaultCounts `json:"faults"`
	Exclusion  Exclusion   `json:"exclusion"`
	// Blame classifies Exclusion's running overlaps by the server's own
	// record of its grants and lease ends.
	Blame      Blames         `json:"blame"`
	TokenOrder TokenOrder     `json:"token_order"`
	Stores     []StoreVerdict `json:"stores"`
	// Rate is of the applied faults with any violation attributed to them
	// (a double holder, a grant out of token order, a stale write any
	// store accepted, a duplicate increment in any store); RateByKind per fault kind. Linearizability
	// is judged over the whole history and attributed to no fault.
	Rate       Rate            `json:"rate"`
	RateByKind map[string]Rate `json:"rate_by_kind"`
	// RunningRate is of the applied faults with a running double holder
	// (Exclusion.Running) attributed to them; RunningRateByKind per fault
	// kind.
	RunningRate       Rate            `json:"running_rate"`
	RunningRateByKind map[string]Rate `json:"running_rate_by_kind"`
}

// Check runs every checker on h: mutual exclusion and token order over
// the lock, and per store (every store the history names)
// linearizability of its register, stale writes (and the holder's
// refused writes) and lost updates of its counter. It writes porcupine's
// visualisations as o says and nothing else.
func Check(h *History, o Options) Verdict {
	fenced := o.FencedStores
	if fenced == nil {
		fenced = []string{StoreFenced}
	}
	v := Verdict{Name: o.Name, Faults: countFaults(h), Exclusion: CheckExclusion(h), TokenOrder: CheckTokenOrder(h)}
	for _, op := range h.Ops {
		if op.Invoke.Process != FinalProcess {
			v.Operations++
		}
	}
	v.Blame = ClassifyOverlaps(h, v.Exclusion)
	all := []Findings{v.Exclusion.Findings, v.TokenOrder.Findings}
	validities := []Validity{v.Exclusion.Valid, v.TokenOrder.Valid}
	for _, store := range h.Stores() {
		lo := LinearizabilityOptions{Fenced: slices.Contains(fenced, store), Timeout: o.LinearizabilityTimeout}
		if o.VisualizationDir != "" {
			lo.Visualization = filepath.Join(o.VisualizationDir, fileName(o.Name, store))
		}
		s := StoreVerdict{
			Store:           store,
			Linearizability: CheckLinearizable(h, store, lo),
			StaleWrites:     CheckStaleWrites(h, store),
			LostUpdates:     CheckLostUpdates(h, store),
		}
		s.Valid = worst(s.Linearizability.Valid, s.StaleWrites.Valid, s.LostUpdates.Valid)
		s.Rate, s.RateByKind = rates(h, s.StaleWrites.Findings, s.LostUpdates.Findings)
		s.StaleRate, s.StaleRateByKind = rates(h, s.StaleWrites.Findings)
		v.Stores = append(v.Stores, s)
		all = append(all, s.StaleWrites.Findings, s.LostUpdates.Findings)
		validities = append(validities, s.Valid)
	}
	v.Valid = worst(validities...)
	v.Rate, v.RateByKind = rates(h, all...)
	v.RunningRate, v.RunningRateByKind = rates(h, Findings{ByFault: v.Exclusion.RunningByFault})
	return v
}

// fileName is the visualisation file of a store.
func fileName(name, store string) string {
	if name == "" {
		return store + ".html"
	}
	return name + "-" + store + ".html"
}

func countFaults(h *History) FaultCounts {
	c := FaultCounts{Applied: len(h.Faults), ByKind: map[string]int{}, Failed: len(h.Failed)}
	for _, f := range h.Faults {
		c.ByKind[f.Fault.Kind]++
	}
	for _, e := range h.Skipped {
		if c.Skipped == nil {
			c.Skipped, c.SkipReasons = map[string]int{}, map[string]string{}
		}
		k := e.Fault.Kind
		c.Skipped[k]++
		if _, ok := c.SkipReasons[k]; !ok {
			c.SkipReasons[k] = e.Error
		}
	}
	return c
}

// rates returns the Wilson rate of the applied faults that have at least
// one violation of fs attributed to them, overall and per fault kind.
func rates(h *History, fs ...Findings) (Rate, map[string]Rate) {
	violated := map[int64]bool{}
	for _, f := range fs {
		for id, n := range f.ByFault {
			if n > 0 {
				violated[id] = true
			}
		}
	}
	trials, hits := map[string]int{}, map[string]int{}
	total := 0
	for _, f := range h.Faults {
		trials[f.Fault.Kind]++
		if violated[f.ID] {
			hits[f.Fault.Kind]++
			total++
		}
	}
	byKind := map[string]Rate{}
	for _, k := range slices.Sorted(maps.Keys(trials)) {
		byKind[k] = Wilson(hits[k], trials[k])
	}
	return Wilson(total, len(h.Faults)), byKind
}
