package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/monolock/monolock-bench/bench/output/compare"
	"github.com/monolock/monolock-bench/bench/output/report"
	"github.com/monolock/monolock-bench/bench/results"
)

// reportCommand re-renders report.md and report.html beside a
// results.json.
func reportCommand(args []string, stdout, stderr io.Writer) int {
	const usage = "usage: monolock-bench report DIR/results.json\n"
	if code, done := flagsOfPathCommand(args, usage, stdout, stderr); done {
		return code
	}
	if len(args) != 1 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if err := report.RerenderWith(args[0], fillDefaults); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	updateIndex(filepath.Dir(args[0]), stderr)
	return exitOK
}

// flagsOfPathCommand handles the flags of a command that takes paths
// only: -h (or --help) prints its usage; any other flag is an error,
// rather than a file name that does not exist. done says the command
// ends with code.
func flagsOfPathCommand(args []string, usage string, stdout, stderr io.Writer) (code int, done bool) {
	for _, a := range args {
		switch {
		case a == "-h" || a == "-help" || a == "--help":
			fmt.Fprint(stdout, usage)
			return exitOK, true
		case strings.HasPrefix(a, "-") && a != "-":
			fmt.Fprintf(stderr, "monolock-bench: unknown flag %s\n%s", a, usage)
			return exitUsage, true
		}
	}
	return 0, false
}

// updateIndex lists a run kept under reports/ in reports/README.md. The
// index is a convenience: failing to write it only warns.
func updateIndex(runDir string, stderr io.Writer) {
	parent := filepath.Dir(filepath.Clean(runDir))
	if filepath.Base(parent) != "reports" {
		return
	}
	if err := report.WriteIndexWith(parent, fillDefaults); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: warning: updating the index of runs in %s: %v\n", parent, err)
	}
}

// compareCommand prints per-figure deltas between two runs, or two sides
// of several runs each, with significance (bench/output/compare).
func compareCommand(args []string, stdout, stderr io.Writer) int {
	const usage = `usage: monolock-bench compare OLD NEW
  OLD and NEW are each a results.json, or several joined by commas
  (A1/results.json,A2/results.json): the runs of one side are pooled, so
  that two builds run in turns (A B A B ...) cancel the machine's drift.
  Every run's decision verdicts (use-case picks, capability cells) are
  also judged on their own and compared: which agree, which flipped.
`
	if code, done := flagsOfPathCommand(args, usage, stdout, stderr); done {
		return code
	}
	if len(args) != 2 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var sides [2][]*results.Results
	for i, arg := range args {
		for _, path := range strings.Split(arg, ",") {
			if path == "" {
				fmt.Fprintf(stderr, "monolock-bench: an empty path in %q\n%s", arg, usage)
				return exitUsage
			}
			r, err := results.Load(path)
			if err != nil {
				fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
				return exitFailure
			}
			fillDefaults(r)
			sides[i] = append(sides[i], r)
		}
	}
	if err := compare.Compare(sides[0], sides[1], 0).Markdown(stdout); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// fillDefaults completes a results file written before contenders and
// scenarios described themselves in it (contender info, claim rules,
// scenario declarations, better directions) from today's contender and
// scenario tables, so an old run renders and compares like a new one.
// What the file has is kept.
func fillDefaults(r *results.Results) {
	d := results.Defaults{}
	for _, c := range contenderTable() {
		d.Contenders = append(d.Contenders, c.Info())
		d.Claims = append(d.Claims, c.Claims...)
	}
	for _, s := range scenarioTable(tableOptions{}) {
		d.Scenarios = append(d.Scenarios, s.Info(r.Parameters.Quick))
	}
	r.FillDefaults(d)
}
