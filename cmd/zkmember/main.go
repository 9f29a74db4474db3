// Command zkmember is the entrypoint of the ZooKeeper image
// (bench/contenders/zookeeper): it writes the files its -write flags
// give, then replaces itself with the command after "--" (the Java
// runtime running the member). A ZooKeeper member reads its ensemble only
// from a configuration file and its id only from dataDir/myid, and the
// image is empty but for the runtime and the jars (no shell), so the
// member's files, which name its peers' addresses known only when the
// containers start, are written here from the container's arguments.
//
// Usage:
//
//	zkmember -write PATH=CONTENT [-write PATH=CONTENT ...] -- PROGRAM [ARG ...]
//
// Parent directories are made (0700); files are written 0600.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// files collects the -write flags.
type files []string

func (f *files) String() string { return strings.Join(*f, " ") }

func (f *files) Set(v string) error {
	path, _, ok := strings.Cut(v, "=")
	if !ok || !filepath.IsAbs(path) {
		return errors.New("want ABSOLUTE-PATH=CONTENT")
	}
	*f = append(*f, v)
	return nil
}

func main() {
	var writes files
	flag.Var(&writes, "write", "write `PATH=CONTENT` before starting the command (repeatable)")
	flag.Parse()
	if err := run(writes, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "zkmember:", err)
		os.Exit(2)
	}
}

// run writes the files and execs argv; it returns only on error.
func run(writes []string, argv []string) error {
	if len(argv) == 0 {
		return errors.New("no command after --")
	}
	for _, w := range writes {
		path, content, _ := strings.Cut(w, "=")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}
