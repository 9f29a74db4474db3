package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/monolock/monolock-bench/bench/markdown"
	"github.com/monolock/monolock-bench/bench/results"
)

// reportCommand re-renders report.md beside a results.json.
func reportCommand(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprint(stderr, "usage: monolock-bench report DIR/results.json\n")
		return exitUsage
	}
	r, err := results.Load(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	path, err := writeReport(filepath.Dir(args[0]), r)
	if err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, path)
	return exitOK
}

// writeReport renders report.md into dir and returns its path.
func writeReport(dir string, r *results.Results) (string, error) {
	var b bytes.Buffer
	if err := markdown.Summary(&b, r); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "report.md")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("monolock-bench: %w", err)
	}
	return path, nil
}

// compareCommand prints per-figure deltas between two runs.
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
	if err := markdown.Compare(stdout, a, b); err != nil {
		fmt.Fprintf(stderr, "monolock-bench: %v\n", err)
		return exitFailure
	}
	return exitOK
}
