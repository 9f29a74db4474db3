package holder

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/faults/guardedstore"
)

// Lines of the pipe protocol between the bench (parent) and a holder
// (child). The child writes one line per event on its stdout; the parent
// writes commands on the child's stdin.
//
//	child → parent: "held <token>" ("held -" without a token) once the lock
//	                is held; "error <message>" if it could not be; "released"
//	                or "released error <message>" after a release
//	parent → child: "release" — release and exit; EOF on stdin means the same
//	                "write <client> <lock> <store addr>..." — write to each
//	                guarded store at once, with the grant's token if any,
//	                without checking the lock first (the holder checked it
//	                before it was frozen); answered "wrote" or
//	                "wrote error <message>"
const (
	lineHeld     = "held"
	lineError    = "error"
	lineReleased = "released"
	lineRelease  = "release"
	lineWrite    = "write"
	lineWrote    = "wrote"
)

// writeTimeout bounds one write of the holder to a guarded store.
const writeTimeout = 5 * time.Second

// Modes of the holder subcommand.
const (
	// modeHold holds the lock once, as the parent says (Serve).
	modeHold = "hold"
	// modeChaos loops as a chaos client (RunChaos).
	modeChaos = "chaos"
)

// Main is the holder subcommand (`monolock-bench holder ...`): it parses
// args, opens the named contender from contenders on the given addresses,
// and runs Serve (or, with -mode chaos, RunChaos) on stdin and stdout.
// Flags: -contender NAME, -addrs A[,B...], -lease DURATION, -key KEY; in
// chaos mode also -client NAME, -history FILE, -fenced and -unfenced
// ADDR, -seed N.
func Main(ctx context.Context, args []string, contenders []bench.Contender, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("holder", flag.ContinueOnError)
	name := fs.String("contender", "", "contender id (as in the contender table)")
	addrs := fs.String("addrs", "", "comma-separated server addresses of the contender's role")
	lease := fs.Duration("lease", 0, "lease / TTL")
	key := fs.String("key", "", "lock key")
	mode := fs.String("mode", modeHold, "hold (hold the lock once, as told on stdin) or chaos (loop as a chaos client until EOF on stdin)")
	var cs ChaosSpec
	fs.StringVar(&cs.Client, "client", "", "chaos: the client's name in the history")
	fs.StringVar(&cs.History, "history", "", "chaos: the history file to record to")
	fs.StringVar(&cs.Fenced, "fenced", "", "chaos: the fenced guarded store's host:port")
	fs.StringVar(&cs.Unfenced, "unfenced", "", "chaos: the unfenced guarded store's host:port")
	fs.Uint64Var(&cs.Seed, "seed", 0, "chaos: seed of the hold and think times")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("holder: %w", err)
	}
	if *name == "" || *addrs == "" || *lease <= 0 || *key == "" {
		return errors.New("holder: -contender, -addrs, -lease and -key are required")
	}
	if *mode != modeHold && *mode != modeChaos {
		return fmt.Errorf("holder: -mode %q: want %s or %s", *mode, modeHold, modeChaos)
	}
	if *mode == modeChaos {
		if err := cs.validate(); err != nil {
			fmt.Fprintf(stdout, "%s %v\n", lineError, err)
			return err
		}
	}
	var c *bench.Contender
	for i := range contenders {
		if contenders[i].Name == *name {
			c = &contenders[i]
		}
	}
	if c == nil {
		return fmt.Errorf("holder: unknown contender %q", *name)
	}
	l, err := c.Open(ctx, strings.Split(*addrs, ","), *lease)
	if err != nil {
		fmt.Fprintf(stdout, "%s opening %s: %v\n", lineError, *name, oneLine(err))
		return fmt.Errorf("holder: opening %s: %w", *name, err)
	}
	defer l.Close()
	if *mode == modeChaos {
		cs.Contender, cs.Addrs, cs.Lease, cs.Key = *name, strings.Split(*addrs, ","), *lease, *key
		return RunChaos(ctx, l, cs, stdin, stdout)
	}
	return Serve(ctx, l, *key, stdin, stdout)
}

// Serve acquires key through l, reports "held" on out, and releases when in
// says "release" or reaches EOF, or ctx ends, reporting "released". An
// acquire failed acquireTries times is reported as "error" and returned.
func Serve(ctx context.Context, l bench.Locker, key string, in io.Reader, out io.Writer) error {
	h, err := acquire(ctx, l, key)
	if err != nil {
		fmt.Fprintf(out, "%s acquire: %v\n", lineError, oneLine(err))
		return fmt.Errorf("holder: acquire: %w", err)
	}
	token := "-"
	if t, ok := h.Token(); ok {
		token = strconv.FormatUint(t, 10)
	}
	if _, err := fmt.Fprintf(out, "%s %s\n", lineHeld, token); err != nil {
		_ = h.Release(context.WithoutCancel(ctx))
		return fmt.Errorf("holder: reporting: %w", err)
	}
	var tok *uint64
	if t, ok := h.Token(); ok {
		tok = &t
	}
	asked := make(chan struct{})
	go func() {
		defer close(asked)
		s := bufio.NewScanner(in)
		for s.Scan() {
			f := strings.Fields(s.Text())
			switch {
			case len(f) == 1 && f[0] == lineRelease:
				return
			case len(f) >= 4 && f[0] == lineWrite:
				fmt.Fprintln(out, wrote(ctx, guardedstore.Write{Client: f[1], Lock: f[2], Token: tok, Payload: "holder"}, f[3:]))
			}
		}
	}()
	select {
	case <-asked:
	case <-ctx.Done(): // SIGTERM or Ctrl-C on the holder itself
	}
	// Release even when ctx ended: the lock must not outlive the holder.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := h.Release(rctx); err != nil {
		fmt.Fprintf(out, "%s %s %v\n", lineReleased, lineError, oneLine(err))
		return fmt.Errorf("holder: release: %w", err)
	}
	fmt.Fprintln(out, lineReleased)
	return nil
}

// acquireTries is how many times a holder tries to acquire before it
// reports the error: it only has to hold before its parent's t0, and an
// acquire lost to a loaded machine (redis's 1s dial to a fault proxy on
// loopback timed out once at load ~15) is not the fault under test.
const acquireTries = 3

// acquire is l.Acquire, tried again after an error while ctx lasts.
func acquire(ctx context.Context, l bench.Locker, key string) (bench.Held, error) {
	var err error
	for range acquireTries {
		var h bench.Held
		if h, err = l.Acquire(ctx, key); err == nil || ctx.Err() != nil {
			return h, err
		}
	}
	return nil, err
}

// wrote sends w to each store at addrs and returns the answer line.
func wrote(ctx context.Context, w guardedstore.Write, addrs []string) string {
	for _, a := range addrs {
		c := guardedstore.NewClient(a)
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		_, err := c.Write(wctx, w)
		cancel()
		c.Close()
		if err != nil {
			return lineWrote + " " + lineError + " " + oneLine(err)
		}
	}
	return lineWrote
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
