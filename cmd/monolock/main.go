// Command monolock is the monolock lock server. Configuration is by flags,
// each with an environment variable (flag beats env beats default); run
// `monolock -h` for the list. SIGTERM or SIGINT shuts down gracefully: the
// protocol listener closes, /healthz turns 503, every session gets ERROR
// 0x01 and is closed; the ops and admin HTTP servers stop last. A second
// signal kills the process. SIGHUP re-reads the TLS files and the ACL file
// and reopens the audit log; a part that fails to reload keeps its previous
// state and the log says why; established connections are untouched.
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

// newLogger returns the diagnostic logger: text or JSON lines on w at the
// configured level, with timestamps in UTC, RFC 3339 (the text handler
// writes milliseconds, the JSON handler nanoseconds).
func newLogger(cfg settings, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel, ReplaceAttr: utcTime}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// utcTime puts the record's time in UTC.
func utcTime(groups []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey && len(groups) == 0 && a.Value.Kind() == slog.KindTime {
		a.Value = slog.TimeValue(a.Value.Time().UTC())
	}
	return a
}

func serve(ctx context.Context, stopSignals func(), cfg settings, log *slog.Logger) error {
	if limit, err := raiseOpenFileLimit(); err != nil {
		log.Warn("monolock: could not raise the open-file limit", "err", err, "limit", limit)
	} else {
		log.Info("monolock: open-file limit", "limit", limit)
	}
	srv, err := server.New(server.Config{
		IOTimeout:       cfg.ioTimeout,
		Logger:          log,
		TLSCertFile:     cfg.tlsCert,
		TLSKeyFile:      cfg.tlsKey,
		TLSClientCAFile: cfg.tlsClientCA,
		ACLFile:         cfg.aclFile,
		AuditLog:        cfg.auditLog,
		Listen:          cfg.listen,
		OpsListen:       cfg.opsListen,
		TCPFastOpen:     cfg.tcpFastOpen,
	})
	if err != nil {
		return err
	}
	// SIGHUP reloads the TLS files and the ACL and reopens the audit log;
	// Reload logs what it did and why a part failed.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// No TCP keep-alive on sessions: leases and the io-timeout bound every
	// silence, and enabling it costs 4 system calls per accepted connection.
	l, err := (&net.ListenConfig{KeepAlive: -1}).Listen(context.Background(), "tcp", cfg.listen)
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
	var admin *http.Server
	adminDone := make(chan error, 1)
	if cfg.adminListen != "" {
		al, err := net.Listen("tcp", cfg.adminListen)
		if err != nil {
			l.Close()
			if ops != nil {
				ops.Close()
			}
			return fmt.Errorf("monolock: admin listen: %w", err)
		}
		admin = &http.Server{Handler: srv.AdminHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go func() { adminDone <- admin.Serve(al) }()
		log.Info("monolock: admin HTTP listening", "addr", al.Addr().String())
		warnIfExposed(log, al.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	log.Info("monolock: listening", "addr", l.Addr().String(), "version", version(), "io_timeout", cfg.ioTimeout, "tcp_fastopen", cfg.tcpFastOpen)

	var failure error
signals:
	for {
		select {
		case <-hup:
			log.Info("monolock: SIGHUP: reloading")
			srv.Reload()
			continue
		case <-ctx.Done():
			stopSignals()
			log.Info("monolock: shutting down")
		case err := <-served:
			failure = err // Serve only returns early on a broken listener
		case err := <-opsDone:
			failure = fmt.Errorf("monolock: ops HTTP: %w", err)
		case err := <-adminDone:
			failure = fmt.Errorf("monolock: admin HTTP: %w", err)
		}
		break signals
	}
	// Sessions get one write (io-timeout) and the linger after an ERROR.
	sctx, cancel := context.WithTimeout(context.Background(), 2*cfg.ioTimeout+time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("monolock: shutdown cut short; remaining connections closed", "err", err)
	}
	for _, h := range []*http.Server{admin, ops} {
		if h != nil {
			if err := h.Shutdown(sctx); err != nil {
				h.Close()
			}
		}
	}
	log.Info("monolock: stopped")
	return failure
}

// warnIfExposed warns when the admin API listens beyond loopback: it has no
// authentication of its own. It reports whether it warned.
func warnIfExposed(log *slog.Logger, addr net.Addr) bool {
	if ta, ok := addr.(*net.TCPAddr); ok && ta.IP.IsLoopback() {
		return false
	}
	log.Warn("monolock: the admin API is reachable beyond loopback and has no authentication; bind -admin-listen to a loopback address or put access control in front of it", "addr", addr.String())
	return true
}

// version is the module version the binary was built from, or "(devel)".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
