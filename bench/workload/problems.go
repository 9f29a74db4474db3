package workload

import (
	"fmt"
	"strings"
)

// Problem is one finding about a workload file at a place in it.
type Problem struct {
	// File names the file as the user gave it ("jobs.yaml", "ready/cron.yaml").
	File string
	// Line and Col are 1-based; zero when the finding has no place in the
	// file (a figure measured later).
	Line, Col int
	// Msg says what is wrong and what is allowed.
	Msg string
}

// String formats p as "file:line:col: msg", the form editors jump to.
func (p Problem) String() string {
	switch {
	case p.Line == 0:
		return p.File + ": " + p.Msg
	case p.Col == 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
}

// Warning is a finding that does not stop the workload from running: it is
// allowed but worth saying (a hold longer than the lease, more claims than
// open files). The CLI prints warnings; the report repeats them.
type Warning struct{ Problem }

// String formats w as "file:line:col: warning: msg".
func (w Warning) String() string {
	p := w.Problem
	p.Msg = "warning: " + p.Msg
	return p.String()
}

// Error is what Parse and Load return for an invalid file: every problem
// found, in file order, so that one edit can fix them all.
type Error struct {
	File     string
	Problems []Problem
}

func (e *Error) Error() string {
	var b strings.Builder
	n := len(e.Problems)
	fmt.Fprintf(&b, "workload: %s is invalid (%d problem%s):", e.File, n, plural(n))
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p.String())
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// suggest returns the allowed word closest to got when it is a near miss
// (a typo or a prefix), else "".
func suggest(got string, allowed []string) string {
	best, bestDist := "", 0
	g := strings.ToLower(got)
	for _, a := range allowed {
		d := editDistance(g, a)
		near := d <= max(1, len(a)/3) ||
			(len(g) >= 3 && (strings.HasPrefix(a, g) || strings.HasPrefix(g, a)))
		if near && (best == "" || d < bestDist) {
			best, bestDist = a, d
		}
	}
	return best
}

// didYouMean is suggest as a clause: "; did you mean "x"?" or "".
func didYouMean(got string, allowed []string) string {
	if s := suggest(got, allowed); s != "" && s != got {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// editDistance is the edit distance between a and b counting a swap of
// two neighbours as one edit (optimal string alignment; bytes: the words
// compared are ASCII field names).
func editDistance(a, b string) int {
	before := make([]int, len(b)+1) // row i-2
	prev := make([]int, len(b)+1)   // row i-1
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1) // a transposition
			}
		}
		before, prev, cur = prev, cur, before
	}
	return prev[len(b)]
}
