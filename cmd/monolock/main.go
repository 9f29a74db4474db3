// Command monolock is the monolock lock server. Configuration is by flags,
// each with an environment variable (flag beats env beats default); run
// `monolock -h` for the list. SIGTERM or SIGINT shuts down gracefully: the
// protocol listener closes, /healthz turns 503, every session gets ERROR
// 0x01 and is closed; the ops HTTP server stops last. A second signal kills
// the process.
//
// The binary imports the Go standard library only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/monolock/monolock-bench/monolock/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, stop, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit status: 0 after a clean
// shutdown, 1 on a runtime failure, 2 on a configuration error. ctx ends
// when a shutdown signal arrives; stopSignals restores default signal
// handling so that a second signal kills the process.
func run(ctx context.Context, stopSignals func(), args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseSettings(args, getenv, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintln(stderr, err)
		return 2
	case cfg.version:
		fmt.Fprintln(stdout, "monolock", version(), runtime.Version())
		return 0
	}
	log := newLogger(cfg, stderr)
	if err := serve(ctx, stopSignals, cfg, log); err != nil {
		log.Error("monolock: exiting", "err", err)
		return 1
	}
	return 0
}

func newLogger(cfg settings, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func serve(ctx context.Context, stopSignals func(), cfg settings, log *slog.Logger) error {
	if limit, err := raiseOpenFileLimit(); err != nil {
		log.Warn("monolock: could not raise the open-file limit", "err", err, "limit", limit)
	} else {
		log.Info("monolock: open-file limit", "limit", limit)
	}
	srv, err := server.New(server.Config{IOTimeout: cfg.ioTimeout, Logger: log})
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("monolock: listen: %w", err)
	}
	var ops *http.Server
	opsDone := make(chan error, 1)
	if cfg.opsListen != "" {
		ol, err := net.Listen("tcp", cfg.opsListen)
		if err != nil {
			l.Close()
			return fmt.Errorf("monolock: ops listen: %w", err)
		}
		ops = &http.Server{Handler: srv.OpsHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go func() { opsDone <- ops.Serve(ol) }()
		log.Info("monolock: ops HTTP listening", "addr", ol.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	log.Info("monolock: listening", "addr", l.Addr().String(), "version", version(), "io_timeout", cfg.ioTimeout)

	var failure error
	select {
	case <-ctx.Done():
		stopSignals()
		log.Info("monolock: shutting down")
	case err := <-served:
		failure = err // Serve only returns early on a broken listener
	case err := <-opsDone:
		failure = fmt.Errorf("monolock: ops HTTP: %w", err)
	}
	// Sessions get one write (io-timeout) and the linger after an ERROR.
	sctx, cancel := context.WithTimeout(context.Background(), 2*cfg.ioTimeout+time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("monolock: shutdown cut short; remaining connections closed", "err", err)
	}
	if ops != nil {
		if err := ops.Shutdown(sctx); err != nil {
			ops.Close()
		}
	}
	log.Info("monolock: stopped")
	return failure
}

// version is the module version the binary was built from, or "(devel)".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
