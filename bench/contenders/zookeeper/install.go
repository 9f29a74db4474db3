package zookeeper

// Finding the host's ZooKeeper install (Debian's zookeeper package: the
// jars under /usr/share/java) and its Java runtime.

import (
	"archive/zip"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Where the Debian packages put what the contender runs.
const (
	// MainJar is libzookeeper-java's jar; its manifest's Class-Path names
	// the jars it needs.
	MainJar = "/usr/share/java/zookeeper.jar"
	// LoggerJar binds SLF4J to a logger that writes to stderr
	// (libslf4j-java, a dependency of libzookeeper-java); without a
	// binding the server would log nothing, errors included.
	LoggerJar = "/usr/share/java/slf4j-simple.jar"
	// DefaultJava is Debian's default Java runtime (default-jre-headless).
	DefaultJava = "/usr/lib/jvm/default-java/bin/java"
	// MainClass starts a member of an ensemble.
	MainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// ErrNoServer is returned when ZooKeeper or its Java runtime is not
// installed.
var ErrNoServer = errors.New("zookeeper: no ZooKeeper install found (" + MainJar + " and a Java runtime): install it, e.g. apt-get install -y libzookeeper-java default-jre-headless")

// Install is the host's ZooKeeper: its jars and the Java runtime that
// runs them.
type Install struct {
	// Java is the java executable, symlinks resolved
	// ("/usr/lib/jvm/java-17-openjdk-amd64/bin/java").
	Java string
	// JavaHome is the runtime's directory (Java's grandparent).
	JavaHome string
	// Jars are MainJar, the jars its manifest's Class-Path names
	// (transitively), and LoggerJar, symlinks resolved: the classpath.
	Jars []string
	// Package is the Debian package's version ("3.8.0-11+deb12u3"), or
	// "" when dpkg-query is missing.
	Package string
}

// ClassPath is the Jars joined with ':'.
func (in Install) ClassPath() string { return strings.Join(in.Jars, ":") }

// FindInstall locates the host's ZooKeeper jars and Java runtime
// (DefaultJava, else java on PATH). The error wraps ErrNoServer when
// either is missing.
func FindInstall(ctx context.Context) (Install, error) {
	java := DefaultJava
	if _, err := os.Stat(java); err != nil {
		if java, err = exec.LookPath("java"); err != nil {
			return Install{}, fmt.Errorf("%w: no java", ErrNoServer)
		}
	}
	java, err := filepath.EvalSymlinks(java)
	if err != nil {
		return Install{}, fmt.Errorf("zookeeper: %w", err)
	}
	if _, err := os.Stat(MainJar); err != nil {
		return Install{}, fmt.Errorf("%w: %v", ErrNoServer, err)
	}
	jars, err := classPathClosure(MainJar)
	if err != nil {
		return Install{}, err
	}
	logger, err := filepath.EvalSymlinks(LoggerJar)
	if err != nil {
		return Install{}, fmt.Errorf("zookeeper: the SLF4J logger (libslf4j-java): %w", err)
	}
	in := Install{Java: java, JavaHome: filepath.Dir(filepath.Dir(java)), Jars: append(jars, logger)}
	if out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", "libzookeeper-java").Output(); err == nil {
		in.Package = strings.TrimSpace(string(out))
	}
	return in, nil
}

// classPathClosure returns the jar at root and every jar the manifests'
// Class-Path entries name, transitively, in order of first mention,
// symlinks resolved. A named jar that does not exist is skipped, as the
// Java launcher skips it.
func classPathClosure(root string) ([]string, error) {
	var jars []string
	seen := map[string]bool{}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			if p == root {
				return nil, fmt.Errorf("zookeeper: %w", err)
			}
			continue
		}
		if seen[real] {
			continue
		}
		seen[real] = true
		jars = append(jars, real)
		cp, err := manifestClassPath(real)
		if err != nil {
			return nil, err
		}
		for _, e := range cp {
			if !filepath.IsAbs(e) {
				e = filepath.Join(filepath.Dir(p), e)
			}
			queue = append(queue, e)
		}
	}
	return jars, nil
}

// manifestClassPath reads the Class-Path attribute of the jar's manifest
// (continuation lines start with one space).
func manifestClassPath(jar string) ([]string, error) {
	z, err := zip.OpenReader(jar)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %s: %w", jar, err)
	}
	defer z.Close()
	f, err := z.Open("META-INF/MANIFEST.MF")
	if err != nil {
		return nil, nil // a jar without a manifest names nothing
	}
	defer f.Close()
	return parseClassPath(f)
}

// parseClassPath returns the entries of a manifest's Class-Path.
func parseClassPath(r io.Reader) ([]string, error) {
	var value strings.Builder
	in := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case in && strings.HasPrefix(line, " "):
			value.WriteString(line[1:])
		case strings.HasPrefix(line, "Class-Path:"):
			in = true
			value.WriteString(strings.TrimPrefix(line, "Class-Path:"))
		default:
			in = false
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("zookeeper: manifest: %w", err)
	}
	return strings.Fields(value.String()), nil
}
