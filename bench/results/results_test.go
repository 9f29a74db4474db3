package results

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// sample builds a valid Results with two repetitions of one latency variant.
func sample(t *testing.T) *Results {
	t.Helper()
	h := hdrhistogram.New(1, int64(time.Minute), 3)
	for i := int64(1); i <= 1000; i++ {
		if err := h.RecordValue(i * 1000); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := NewHistogram("cycle", "ns", h)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 30, 4, 0, 0, 123456789, time.UTC)
	raw := []Raw{
		{
			Scenario: "latency", Contender: "redis", Variant: "w1", Repetition: 1,
			StartedAt: start, Seconds: 1.5,
			Metrics:    []Metric{{Name: "cycle_p50", Unit: "us", Value: 500.5}, {Name: "cycle_p99", Unit: "us", Value: 990}},
			Counts:     map[string]int64{"cycles": 1000},
			Histograms: []Histogram{enc},
			CPU:        &CPU{ServerMS: 12.5, ServerSource: "/proc/1/stat", ClientMS: 30},
			Clients:    []Client{{ID: "w0", Counts: map[string]int64{"grants": 3}, Metrics: []Metric{{Name: "wait_p50", Unit: "ms", Value: 1}}}},
			Series:     []Series{{Name: "trial", Unit: "ms", Values: []float64{1, 2.5}}},
		},
		{
			Scenario: "latency", Contender: "redis", Variant: "w1", Repetition: 2,
			StartedAt: start.Add(time.Second), Seconds: 1.5,
			Metrics: []Metric{{Name: "cycle_p50", Unit: "us", Value: 400}, {Name: "cycle_p99", Unit: "us", Value: 1000}},
		},
	}
	return &Results{
		SchemaVersion: SchemaVersion,
		RunID:         "20261130T040000Z",
		StartedAt:     start,
		FinishedAt:    start.Add(time.Minute),
		Environment: Environment{
			CPUModel: "test cpu", Cores: 2, GOMAXPROCS: 2, Kernel: "6.1", OS: "linux", Arch: "amd64",
			GoVersion: "go1.26", Backend: "local", NetworkPath: "loopback",
			Images:  []Image{{Role: "redis", Ref: "r:1", Source: "host"}},
			Servers: []Server{{Role: "redis", Address: "127.0.0.1:6379", Version: "7.0.15"}},
			Sysctls: map[string]string{"net.ipv4.tcp_tw_reuse": "2"},
		},
		Parameters: Parameters{
			Repetitions: 2, Scenarios: []string{"latency"}, Contenders: []string{"redis"},
			Scenario:  map[string]Settings{"latency": {"iterations": "1000", "warmup": "100"}},
			Contender: map[string]Settings{"redis": {"ttl": "10s", "retry_delay": "jittered 50ms-250ms"}},
		},
		Summary: withBetter(Summarize(raw)),
		Raw:     raw,
		Notes:   []string{"a note"},
		Contenders: []ContenderInfo{
			{Name: "redis", Label: "Redis SET NX", Family: "redis", Colour: "#c8322d"},
			{Name: "redis-floor", Family: "floor", Floor: true},
		},
		Claims: []ClaimRule{sampleRule()},
		Scenarios: []ScenarioInfo{{Name: "latency", Metrics: []MetricSpec{
			{Name: "cycle_p50", Unit: "us", Better: BetterLower, Kind: KindLatency},
			{Name: "cycle_p99", Unit: "us", Better: BetterLower, Kind: KindLatency},
		}, Variants: []VariantInfo{{Name: "w1", VariantParams: VariantParams{Workers: 1, Load: LoadClosed}}}}},
	}
}

// withBetter marks every row better lower, as the runner does for times.
func withBetter(rows []Row) []Row {
	for i := range rows {
		rows[i].Better = BetterLower
	}
	return rows
}

func sampleRule() ClaimRule {
	return ClaimRule{
		ID: "fast-cycle", Claim: "Cycles are fast.", Statement: "cycle p50 at most 1 ms.", Threshold: "holds when ≤ 1000 us",
		Scenario: "latency", Variant: "w*", Pick: PickFirst, Subject: "redis", Metric: "cycle_p50",
		Op: AtMost, Than: ClaimBound{Value: 1000}, Spread: SpreadRange,
		Guards: []ClaimGuard{{Metric: "failures"}}, Quote: []ClaimQuote{{Metric: "cycle_p99"}},
	}
}

func TestRoundTrip(t *testing.T) {
	want := sample(t)
	path := filepath.Join(t.TempDir(), "results.json")
	if err := want.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip changed the results:\n got %+v\nwant %+v", got, want)
	}
	h, err := got.Raw[0].Histograms[0].Decode()
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != 1000 || h.ValueAtQuantile(50) < 499000 || h.ValueAtQuantile(50) > 501000 {
		t.Fatalf("decoded histogram: count %d p50 %d", h.TotalCount(), h.ValueAtQuantile(50))
	}
}

func TestSummarize(t *testing.T) {
	rows := Summarize(sample(t).Raw)
	want := []Row{
		{Scenario: "latency", Contender: "redis", Variant: "w1", Metric: "cycle_p50", Unit: "us", Median: 450.25, Min: 400, Max: 500.5, N: 2},
		{Scenario: "latency", Contender: "redis", Variant: "w1", Metric: "cycle_p99", Unit: "us", Median: 995, Min: 990, Max: 1000, N: 2},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("Summarize = %+v, want %+v", rows, want)
	}
	odd := Summarize([]Raw{
		{Scenario: "s", Contender: "c", Variant: "v", Repetition: 1, Metrics: []Metric{{Name: "m", Unit: "u", Value: 3, Better: "lower"}}},
		{Scenario: "s", Contender: "c", Variant: "v", Repetition: 2, Metrics: []Metric{{Name: "m", Unit: "u", Value: 1, Better: "lower"}}},
		{Scenario: "s", Contender: "c", Variant: "v", Repetition: 3, Metrics: []Metric{{Name: "m", Unit: "u", Value: 7, Better: "lower"}}},
	})
	if len(odd) != 1 || odd[0].Median != 3 || odd[0].Min != 1 || odd[0].Max != 7 || odd[0].N != 3 || odd[0].Better != "lower" {
		t.Fatalf("odd Summarize = %+v", odd)
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(r *Results)
		want   string
	}{
		{"future version", func(r *Results) { r.SchemaVersion = SchemaVersion + 1 }, "schema_version"},
		{"no run id", func(r *Results) { r.RunID = "" }, "run_id"},
		{"no start", func(r *Results) { r.StartedAt = time.Time{} }, "started_at"},
		{"finish before start", func(r *Results) { r.FinishedAt = r.StartedAt.Add(-time.Second) }, "finished_at"},
		{"bad backend", func(r *Results) { r.Environment.Backend = "cloud" }, "backend"},
		{"no repetitions", func(r *Results) { r.Parameters.Repetitions = 0 }, "repetitions"},
		{"partial without reason", func(r *Results) { r.Partial = true }, "partial"},
		{"reason without partial", func(r *Results) { r.PartialReason = "x" }, "partial"},
		{"empty variant", func(r *Results) { r.Raw[1].Variant = "" }, "empty scenario"},
		{"repetition 0", func(r *Results) { r.Raw[1].Repetition = 0 }, "repetition < 1"},
		{"duplicate repetition", func(r *Results) { r.Raw[1].Repetition = 1 }, "duplicate"},
		{"wrong spec unit", func(r *Results) { r.Raw[1].Metrics[0].Unit = "ms" }, "the spec says"},
		{"metric without unit", func(r *Results) { r.Raw[1].Metrics[0].Unit = "" }, "without unit"},
		{"NaN metric", func(r *Results) { r.Raw[1].Metrics[0].Value = math.NaN() }, "value"},
		{"metric twice", func(r *Results) { r.Raw[1].Metrics[1].Name = "cycle_p50" }, "twice"},
		{"histogram count", func(r *Results) { r.Raw[0].Histograms[0].Count++ }, "encoding holds"},
		{"histogram garbage", func(r *Results) { r.Raw[0].Histograms[0].Encoded = "!!" }, "histogram"},
		{"cpu without source", func(r *Results) { r.Raw[0].CPU.ServerSource = "" }, "cpu"},
		{"client without id", func(r *Results) { r.Raw[0].Clients[0].ID = "" }, "client"},
		{"infinite series", func(r *Results) { r.Raw[0].Series[0].Values[0] = math.Inf(1) }, "series"},
		{"summary edited", func(r *Results) { r.Summary[0].Median = 1 }, "summary"},
		{"summary dropped", func(r *Results) { r.Summary = r.Summary[:1] }, "summary"},
		{"better unknown", func(r *Results) { r.Summary[0].Better = "up" }, "better"},
		{"better differs", func(r *Results) { r.Summary[1].Metric, r.Summary[1].Better = "cycle_p50", "higher" }, "better"},
		{"contender without name", func(r *Results) { r.Contenders[0].Name = "" }, "contender_info"},
		{"contender twice", func(r *Results) { r.Contenders[1].Name = "redis" }, "twice"},
		{"bad colour", func(r *Results) { r.Contenders[0].Colour = "red" }, "colour"},
		{"claim without statement", func(r *Results) { r.Claims[0].Statement = "" }, "statement"},
		{"claim without metric", func(r *Results) { r.Claims[0].Metric = "" }, "metric"},
		{"claim op", func(r *Results) { r.Claims[0].Op = "<=" }, "op"},
		{"claim spread", func(r *Results) { r.Claims[0].Spread = "" }, "spread"},
		{"claim pick", func(r *Results) { r.Claims[0].Pick = "last" }, "pick"},
		{"claim two bounds", func(r *Results) { r.Claims[0].Than = ClaimBound{Contender: "a", Parameter: "lease"} }, "both"},
		{"claim negative factor", func(r *Results) { r.Claims[0].Than.Factor = -1 }, "factor"},
		{"claim within without band", func(r *Results) { r.Claims[0].Op, r.Claims[0].Than.Factor = Within, 1 }, "within"},
		{"claim derive without per", func(r *Results) { r.Claims[0].Derive = &Derivation{Times: []string{"a"}} }, "derive"},
		{"claim guard without metric", func(r *Results) { r.Claims[0].Guards[0].Metric = "" }, "guard"},
		{"claim twice", func(r *Results) { r.Claims = append(r.Claims, sampleRule()) }, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sample(t)
			tt.mutate(r)
			err := r.Validate()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want ErrInvalid mentioning %q", err, tt.want)
			}
			if err := r.Save(filepath.Join(t.TempDir(), "results.json")); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Save() = %v, want ErrInvalid", err)
			}
		})
	}
}

// An old file gets the contender info and claim rules of the contenders
// it ran and the better directions it lacks; what it has is kept.
func TestFillDefaults(t *testing.T) {
	r := sample(t)
	r.Contenders, r.Claims, r.Scenarios = nil, nil, nil
	for i := range r.Summary {
		r.Summary[i].Better = ""
	}
	other := sampleRule()
	other.ID, other.Subject = "other", "etcd"
	d := Defaults{
		Contenders: []ContenderInfo{{Name: "etcd"}, {Name: "redis", Family: "redis"}},
		Claims:     []ClaimRule{other, sampleRule()},
		Scenarios: []ScenarioInfo{
			{Name: "throughput", Metrics: []MetricSpec{{Name: "cycles_per_sec", Unit: "1/s", Better: BetterHigher}}},
			{Name: "latency", Title: "Latency", Metrics: []MetricSpec{{Name: "cycle_p50", Unit: "us", Better: BetterLower}, {Name: "cycle_p99", Unit: "us"}},
				Variants: []VariantInfo{{Name: "w8", VariantParams: VariantParams{Workers: 8}}, {Name: "w1", VariantParams: VariantParams{Workers: 1}}}},
		},
	}
	// Before Raw.Skipped, the runner noted a skipped variant.
	r.Notes = append(r.Notes, "failover/minority-down/redis skipped: single server: no minority to lose")
	nraw, nnotes := len(r.Raw), len(r.Notes)
	r.FillDefaults(d)
	if len(r.Raw) != nraw+1 || len(r.Notes) != nnotes-1 {
		t.Fatalf("%d records, notes %q; want the skip note as a record", len(r.Raw), r.Notes)
	}
	if got, want := r.Raw[nraw], (Raw{Scenario: "failover", Variant: "minority-down", Contender: "redis", Repetition: 1, Skipped: "single server: no minority to lose"}); !reflect.DeepEqual(got, want) {
		t.Errorf("record %+v, want %+v", got, want)
	}
	if len(r.Contenders) != 1 || r.Contenders[0].Name != "redis" {
		t.Errorf("contenders %+v, want redis only", r.Contenders)
	}
	if len(r.Claims) != 1 || r.Claims[0].ID != "fast-cycle" {
		t.Errorf("claims %+v, want fast-cycle only", r.Claims)
	}
	if r.Summary[0].Better != BetterLower || r.Summary[1].Better != "" {
		t.Errorf("better %q, %q", r.Summary[0].Better, r.Summary[1].Better)
	}
	// The scenarios it ran, with the variants it ran and their parameters.
	if got := r.Scenarios; len(got) != 1 || got[0].Name != "latency" || got[0].Title != "Latency" ||
		!reflect.DeepEqual(got[0].Variants, []VariantInfo{{Name: "w1", VariantParams: VariantParams{Workers: 1}}}) {
		t.Errorf("scenario info %+v, want latency with w1 only", got)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	kept := sample(t)
	kept.FillDefaults(d)
	if want := sample(t); !reflect.DeepEqual(kept, want) {
		t.Errorf("FillDefaults changed a file that had everything")
	}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, content, want string
	}{
		{"not json", "hello", "not a results file"},
		{"newer schema", `{"schema_version": 99}`, "newer"},
		{"empty object", `{}`, "schema_version 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(write(tt.name+".json", tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load() = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Load(missing) = %v, want os.ErrNotExist", err)
	}
}

// TestDeclared: a metric its scenario declares passes; one it does not
// declare, one in another unit, or a scenario no info describes fails.
func TestDeclared(t *testing.T) {
	info := []ScenarioInfo{{Name: "latency", Metrics: []MetricSpec{{Name: "acquire_p50", Unit: "us"}}}}
	raw := func(scenario, metric, unit string) Raw {
		return Raw{Scenario: scenario, Metrics: []Metric{{Name: metric, Unit: unit}}}
	}
	if err := Declared(info, raw("latency", "acquire_p50", "us")); err != nil {
		t.Errorf("a declared metric: %v", err)
	}
	for _, r := range []Raw{raw("latency", "acquire_p51", "us"), raw("latency", "acquire_p50", "ms"), raw("chaos", "faults", "count")} {
		if err := Declared(info, r); !errors.Is(err, ErrUndeclared) {
			t.Errorf("%s %s in %s: err = %v, want ErrUndeclared", r.Scenario, r.Metrics[0].Name, r.Metrics[0].Unit, err)
		}
	}
}

// A file written before the pitfall mark existed gets today's mark for
// the contenders it already describes; nothing else of its info changes.
func TestFillDefaultsMarksPitfalls(t *testing.T) {
	r := &Results{Contenders: []ContenderInfo{{Name: "pool", Label: "as recorded"}, {Name: "plain"}}}
	r.FillDefaults(Defaults{Contenders: []ContenderInfo{{Name: "pool", Label: "today's", Pitfall: true}, {Name: "plain"}}})
	if !r.Contenders[0].Pitfall || r.Contenders[0].Label != "as recorded" || r.Contenders[1].Pitfall {
		t.Errorf("contenders %+v: want pool marked a pitfall, its label kept, plain unmarked", r.Contenders)
	}
}
