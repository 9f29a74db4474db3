package host

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// procRoot is where the proc filesystem is mounted; tests point it at a
// directory of their own.
var procRoot = procfs.DefaultMountPoint

// proc opens the proc filesystem.
func proc() (procfs.FS, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return procfs.FS{}, fmt.Errorf("host: %w", err)
	}
	return fs, nil
}

// process opens /proc/<pid>.
func process(pid int) (procfs.Proc, error) {
	fs, err := proc()
	if err != nil {
		return procfs.Proc{}, err
	}
	p, err := fs.Proc(pid)
	if err != nil {
		return procfs.Proc{}, fmt.Errorf("host: %w", err)
	}
	return p, nil
}
