package sessions_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/monolock/monolock-bench/bench/contenders/monolock"
	"github.com/monolock/monolock-bench/bench/host"
	"github.com/monolock/monolock-bench/bench/load/sessions"
	monolockclient "github.com/monolock/monolock-bench/monolock"
)

const outOfFilesEnv = "SESSIONS_TEST_OUT_OF_FILES_ADDR"

// TestOpenOutOfFiles runs Open in a child process whose soft open-file
// limit is 64, against a server in this process: Check refuses the C
// beforehand, and Open, tried anyway, fails naming the limit.
func TestOpenOutOfFiles(t *testing.T) {
	srv, _ := newServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestOutOfFilesChild$", "-test.v")
	cmd.Env = append(os.Environ(), outOfFilesEnv+"="+srv.Addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{
		"check: bench: 200 sessions need",
		"RLIMIT_NOFILE is 64",
		"open: sessions: session ",
		"too many open files (out of open files: see FileLimits.Check and RLIMIT_NOFILE)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
	eventually(t, "an empty server after the child exited", serverEmpty(srv))
}

func TestOutOfFilesChild(t *testing.T) {
	addr := os.Getenv(outOfFilesEnv)
	if addr == "" {
		t.Skip("runs only as TestOpenOutOfFiles's child")
	}
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	r.Cur = 64
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	l, err := host.ProcessFileLimits(os.Getpid(), "bench")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("check: %v\n", l.Check(200, 1, 16))
	locker := monolock.New(monolockclient.Config{Address: addr}, 30*time.Second)
	set, err := sessions.Open(context.Background(), sessions.Config{Locker: locker, Sessions: 200, Concurrency: 8})
	if err == nil {
		set.Close(context.Background())
	}
	fmt.Printf("open: %v\n", err)
}
