package engine

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// hostRootfs collects the host's executable of p and every shared library
// ldd says it loads as files under rootfs/, at the paths the dynamic
// loader looks for them (symlinks resolved to plain files), and returns
// them with the executable's version.
func hostRootfs(ctx context.Context, p ProgramImage) ([]ContextFile, string, error) {
	exe := p.Executable
	path, err := exec.LookPath(exe)
	if err != nil {
		return nil, "", fmt.Errorf("bench: no image for %s: not found on PATH: install it (Debian/Ubuntu: apt-get install -y %s) or set %s", exe, exe, p.Env)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, "", fmt.Errorf("bench: %s: %w", exe, err)
	}
	// Run through the name on PATH: some programs pick their mode from
	// argv[0].
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return nil, "", fmt.Errorf("bench: %s --version: %w", exe, err)
	}
	version, err := parseVersion(string(out))
	if err != nil {
		return nil, "", err
	}
	libs, err := HostLibraries(ctx, real)
	if err != nil {
		return nil, "", err
	}
	// The file keeps the name on PATH whatever the host's symlink points
	// at, since some programs choose their mode from argv[0].
	exeFile, err := HostFile(real, "rootfs/usr/bin/"+exe)
	if err != nil {
		return nil, "", err
	}
	files := []ContextFile{exeFile}
	for _, lib := range libs {
		f, err := HostFile(lib, "rootfs"+lib)
		if err != nil {
			return nil, "", err
		}
		files = append(files, f)
	}
	return files, version, nil
}

var versionNumber = regexp.MustCompile(`\d+\.\d+(\.\d+)?`)

// parseVersion reads the first version number of `<program> --version`
// ("Redis server v=7.0.15 sha=..." gives 7.0.15).
func parseVersion(out string) (string, error) {
	v := versionNumber.FindString(out)
	if v == "" {
		return "", fmt.Errorf("bench: no version number in --version output %q", strings.TrimSpace(out))
	}
	return v, nil
}

// parseLdd returns the absolute paths of the libraries and the loader in
// ldd output, in order, as the binary asks for them (not resolved):
//
//	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)
//	/lib64/ld-linux-x86-64.so.2 (0x...)
//
// The vDSO has no file and is skipped; a library ldd cannot find is an
// error.
func parseLdd(out string) ([]string, error) {
	var paths []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.Contains(line, "statically linked") {
			continue
		}
		if name, rest, ok := strings.Cut(line, "=>"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 || fields[0] == "not" {
				return nil, fmt.Errorf("bench: the executable needs %s, which ldd cannot find", strings.TrimSpace(name))
			}
			if strings.HasPrefix(fields[0], "/") {
				paths = append(paths, fields[0])
			}
			continue
		}
		if strings.HasPrefix(line, "/") {
			paths = append(paths, strings.Fields(line)[0])
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("bench: the executable is not dynamically linked as expected; ldd said %q", strings.TrimSpace(out))
	}
	return paths, nil
}
