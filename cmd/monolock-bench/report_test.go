package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// report and compare take paths only: -h prints their usage and succeeds,
// any other flag is bad usage (not a file that does not exist), as is a
// wrong number of paths.
func TestReportAndCompareUsage(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout bool
		says   string
	}{
		{[]string{"report", "--help"}, exitOK, true, "usage: monolock-bench report DIR/results.json"},
		{[]string{"compare", "-h"}, exitOK, true, "usage: monolock-bench compare OLD NEW"},
		{[]string{"report", "--out", "x/results.json"}, exitUsage, false, "unknown flag --out"},
		{[]string{"compare", "a/results.json", "-x", "b/results.json"}, exitUsage, false, "unknown flag -x"},
		{[]string{"report"}, exitUsage, false, "usage: monolock-bench report"},
		{[]string{"compare", "a/results.json"}, exitUsage, false, "usage: monolock-bench compare"},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), tc.args, &stdout, &stderr)
		out := stderr.String()
		if tc.stdout {
			out = stdout.String()
		}
		if code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("%q: exit %d, printed %q; want exit %d and %q", tc.args, code, out, tc.code, tc.says)
		}
	}
}
