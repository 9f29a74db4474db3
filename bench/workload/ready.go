package workload

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// readyFiles are the workloads that ship with the bench, one annotated
// file each; ready/job-queue.yaml is the annotated example of the format.
//
//go:embed ready/*.yaml
var readyFiles embed.FS

// Ready returns the names of the ready workloads, sorted.
func Ready() []string {
	entries, err := readyFiles.ReadDir("ready")
	if err != nil {
		panic(err) // the embedded folder is part of the binary
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Load reads a workload by the name of a ready one ("job-queue", see
// Ready) or by the path of a file. A name with a '/' or ending in .yaml,
// .yml or .json is a path; any other is a ready workload's name, or a path
// when no ready workload has it. It returns the workload and its warnings,
// or an *Error listing every problem of the file.
func Load(nameOrPath string) (Workload, []Warning, error) {
	if isReadyName(nameOrPath) {
		file := "ready/" + nameOrPath + ".yaml"
		data, err := readyFiles.ReadFile(file)
		if err == nil {
			w, ws, err := Parse(file, data)
			w.Ready = err == nil
			return w, ws, err
		}
	}
	data, err := os.ReadFile(nameOrPath)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsRune(nameOrPath, '/') {
		return Workload{}, nil, fmt.Errorf("workload: %q is neither a file nor a ready workload (ready: %s)", nameOrPath, strings.Join(Ready(), ", "))
	}
	if err != nil {
		return Workload{}, nil, fmt.Errorf("workload: %w", err)
	}
	return Parse(nameOrPath, data)
}

func isReadyName(s string) bool {
	switch path.Ext(s) {
	case ".yaml", ".yml", ".json":
		return false
	}
	return s != "" && !strings.ContainsRune(s, '/')
}
