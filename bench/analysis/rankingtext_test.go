package analysis

import (
	"strings"
	"testing"
)

// The decision's ranking sentences and the sections' ranking lines word a
// noisy entry alike: both go through JoinRanking.
func TestRankingSentencesWordNoiseAsTheSections(t *testing.T) {
	es := Rank([]Entry{
		{Contender: "a", Values: []float64{1, 1.1, 1.2}, Unit: "ms"},
		{Contender: "b", Values: []float64{5, 5.1, 5.2}, Unit: "ms"},
		{Contender: "c", Values: []float64{1, 20, 40}, Unit: "ms"},
	}, false)
	run := &Run{}
	got := run.rankingSentences(Ranking{Text: "acquire p50", Condition: Condition{Variant: "w1"}, Entries: es})[0]
	joined := JoinRanking(es, entryText)
	if !strings.Contains(got, joined) {
		t.Errorf("sentence %q does not hold the joined ranking %q", got, joined)
	}
	for _, want := range []string{"a ", ", then b ", "; not ranked (noise): c "} {
		if !strings.Contains(got, want) {
			t.Errorf("sentence %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "noise, not ranked") {
		t.Errorf("sentence %q words noise the old way", got)
	}
}
