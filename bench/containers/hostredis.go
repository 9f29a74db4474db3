package containers

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// redisInstallHint tells a user what to do when no Redis can be had.
const redisInstallHint = "install redis-server (Debian/Ubuntu: apt-get install -y redis-server) or set " + RedisImageEnv

// hostRedisRootfs collects the host's redis-server and every shared
// library ldd says it loads as files under rootfs/, at the paths the
// dynamic loader looks for them (symlinks resolved to plain files), and
// returns them with the server's version.
func hostRedisRootfs(ctx context.Context) ([]contextFile, string, error) {
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, "", fmt.Errorf("bench: no Redis image: redis-server not found on PATH: %s", redisInstallHint)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, "", fmt.Errorf("bench: redis-server: %w", err)
	}
	// Run through the name on PATH: Redis picks its mode from argv[0].
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return nil, "", fmt.Errorf("bench: redis-server --version: %w", err)
	}
	version, err := parseRedisVersion(string(out))
	if err != nil {
		return nil, "", err
	}
	lddOut, err := exec.CommandContext(ctx, "ldd", real).Output()
	if err != nil {
		return nil, "", fmt.Errorf("bench: ldd %s (needs a dynamically linked redis-server and ldd): %w", real, err)
	}
	libs, err := parseLdd(string(lddOut))
	if err != nil {
		return nil, "", err
	}

	// Redis chooses its mode from argv[0], so the file is named
	// redis-server whatever the host's symlink points at.
	paths := append([]string{"/usr/bin/redis-server"}, libs...)
	sources := append([]string{real}, libs...)
	files := make([]contextFile, 0, len(paths))
	for i, dst := range paths {
		src, err := filepath.EvalSymlinks(sources[i])
		if err != nil {
			return nil, "", fmt.Errorf("bench: redis-server library: %w", err)
		}
		content, err := os.ReadFile(src)
		if err != nil {
			return nil, "", fmt.Errorf("bench: redis-server library: %w", err)
		}
		files = append(files, contextFile{name: "rootfs" + dst, mode: 0o755, content: content})
	}
	return files, version, nil
}

var redisVersion = regexp.MustCompile(`\bv=(\S+)`)

// parseRedisVersion reads the version from `redis-server --version`
// ("Redis server v=7.0.15 sha=...").
func parseRedisVersion(out string) (string, error) {
	m := redisVersion.FindStringSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("bench: unexpected redis-server --version output %q", strings.TrimSpace(out))
	}
	return m[1], nil
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
				return nil, fmt.Errorf("bench: redis-server needs %s, which ldd cannot find", strings.TrimSpace(name))
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
		return nil, fmt.Errorf("bench: redis-server is not dynamically linked as expected; ldd said %q", strings.TrimSpace(out))
	}
	return paths, nil
}
