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

// Main is the holder subcommand (`monolock-bench holder ...`): it parses
// args, opens the named contender from contenders on the given addresses,
// and runs Serve on stdin and stdout. Flags: -contender NAME, -addrs
// A[,B...], -lease DURATION, -key KEY.
func Main(ctx context.Context, args []string, contenders []bench.Contender, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("holder", flag.ContinueOnError)
	name := fs.String("contender", "", "contender id (as in the contender table)")
	addrs := fs.String("addrs", "", "comma-separated server addresses of the contender's role")
	lease := fs.Duration("lease", 0, "lease / TTL")
	key := fs.String("key", "", "lock key")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("holder: %w", err)
	}
	if *name == "" || *addrs == "" || *lease <= 0 || *key == "" {
		return errors.New("holder: -contender, -addrs, -lease and -key are required")
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
	return Serve(ctx, l, *key, stdin, stdout)
}

// Serve acquires key through l, reports "held" on out, and releases when in
// says "release" or reaches EOF, or ctx ends, reporting "released". A failed
// acquire is reported as "error" and returned.
func Serve(ctx context.Context, l bench.Locker, key string, in io.Reader, out io.Writer) error {
	h, err := l.Acquire(ctx, key)
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
