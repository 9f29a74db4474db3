// Command monolockctl runs a command under a monolock lock and talks to a
// monolock server's admin API.
//
//	monolockctl run [flags] NAME [--] CMD [ARGS...]   run CMD while holding NAME
//	monolockctl locks [flags] [MATCH]                 list held and awaited locks
//	monolockctl show [flags] NAME                     one lock: holder and queue
//	monolockctl release [flags] NAME                  force-release NAME's owner
//	monolockctl kick [flags] NAME REMOTE_ADDR         remove one waiter from the queue
//
// Run "monolockctl help" or "monolockctl SUBCOMMAND -h" for flags and exit
// codes.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes besides the command's own status (see usageRun).
const (
	exitOK          = 0
	exitFailure     = 1  // admin request failed, or another error
	exitUsage       = 2  // bad flags or arguments
	exitNotObtained = 75 // lock not obtained (wait expired, server unreachable or refused)
	exitLost        = 76 // lock lost while the command ran; the command was stopped
	exitCannotRun   = 126
	exitNotFound    = 127
)

const usageTop = `usage: monolockctl SUBCOMMAND [flags] [args]

Subcommands:
  run      run a command while holding a lock (like flock(1), across machines)
  locks    list locks with an owner or waiters (admin API)
  show     show one lock's holder and queue (admin API)
  release  force-release a lock's owner; the next waiter is promoted (admin API)
  kick     remove one waiter from a lock's queue (admin API)

"monolockctl SUBCOMMAND -h" prints a subcommand's flags.
`

func main() {
	os.Exit(cli(os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// cli runs one invocation and returns the exit code.
func cli(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageTop)
		return exitUsage
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "run":
		return runCommand(args, getenv, stdin, stdout, stderr)
	case "locks", "show", "release", "kick":
		return adminCommand(sub, args, getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageTop)
		return exitOK
	}
	fmt.Fprintf(stderr, "monolockctl: unknown subcommand %q\n\n%s", sub, usageTop)
	return exitUsage
}

// parseFlags parses args into fs and maps flag errors to exit codes: -h
// is success, anything else a usage error (the flag package has already
// printed the message and the usage).
func parseFlags(fs *flag.FlagSet, args []string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return exitOK, false
	default:
		return exitUsage, false
	}
}

// usageError prints msg and the subcommand's usage, and returns exitUsage.
func usageError(fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(fs.Output(), "monolockctl %s: %s\n", fs.Name(), fmt.Sprintf(format, a...))
	fs.Usage()
	return exitUsage
}

// envOr returns getenv(key), or def when it is empty.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
