package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/monolock/monolock-bench/bench/compare"
	"github.com/monolock/monolock-bench/bench/report"
	"github.com/monolock/monolock-bench/bench/results"
)

// reportCommand re-renders report.md and report.html beside a
// results.json.
func reportCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, "usage: monolock-bench report DIR/results.json\n")
		return exitUsage
	}
	if err := report.Rerender(args[0]); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	updateIndex(filepath.Dir(args[0]), stderr)
	return exitOK
}

// updateIndex lists a run kept under reports/ in reports/README.md. The
// index is a convenience: failing to write it only warns.
func updateIndex(runDir string, stderr io.Writer) {
	parent := filepath.Dir(filepath.Clean(runDir))
	if filepath.Base(parent) != "reports" {
		return
	}
	if err := report.WriteIndex(parent); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: warning: updating the index of runs in %s: %v\n", parent, err)
	}
}

// compareCommand prints per-figure deltas between two runs, with
// significance (bench/compare).
func compareCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprint(stderr, "usage: monolock-bench compare A/results.json B/results.json\n")
		return exitUsage
	}
	a, err := results.Load(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	b, err := results.Load(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	if err := compare.Compare(a, b, 0).Markdown(stdout); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	return exitOK
}
