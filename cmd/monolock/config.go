package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// settings are the effective configuration after flags, env and defaults.
type settings struct {
	listen      string
	opsListen   string
	adminListen string
	tlsCert     string
	tlsKey      string
	tlsClientCA string
	aclFile     string
	auditLog    string
	ioTimeout   time.Duration
	tcpFastOpen bool
	logLevel    slog.Level
	logFormat   string
	version     bool
}

// option is one setting: a flag, its env var and its default. Flag beats
// env beats default.
type option struct {
	flag, env, def, usage string
	boolean               bool   // a switch: -flag alone means true
	raw                   string // the effective text
	source                string // where raw came from, for error messages
}

func options() []*option {
	return []*option{
		{flag: "listen", env: "MONOLOCK_LISTEN_ADDRESS", def: "0.0.0.0:7070", usage: "protocol listen address, host:port"},
		{flag: "ops-listen", env: "MONOLOCK_OPS_LISTEN_ADDRESS", usage: "ops HTTP address (/metrics /healthz /readyz); empty: off"},
		{flag: "admin-listen", env: "MONOLOCK_ADMIN_LISTEN_ADDRESS", usage: "admin HTTP API address, no auth of its own; empty: off"},
		{flag: "tls-cert", env: "MONOLOCK_TLS_CERT", usage: "PEM certificate file: serve TLS (needs -tls-key)"},
		{flag: "tls-key", env: "MONOLOCK_TLS_KEY", usage: "PEM private key file of -tls-cert"},
		{flag: "tls-client-ca", env: "MONOLOCK_TLS_CLIENT_CA", usage: "PEM CA bundle: require and verify client certificates (mTLS; needs -tls-cert)"},
		{flag: "acl-file", env: "MONOLOCK_ACL_FILE", usage: "JSON ACL file (needs -tls-client-ca)"},
		{flag: "audit-log", env: "MONOLOCK_AUDIT_LOG", usage: "audit log: a file path, or - for stdout; empty: off"},
		{flag: "tcp-fastopen", env: "MONOLOCK_TCP_FASTOPEN", def: "false", boolean: true, usage: "accept TCP Fast Open on the listener (Linux; also needs sysctl net.ipv4.tcp_fastopen with bit 0x2, e.g. 3)"},
		{flag: "io-timeout", env: "MONOLOCK_IO_TIMEOUT", def: "5s", usage: "bound on reading one started frame, one write, and a handshake"},
		{flag: "log-level", env: "MONOLOCK_LOG_LEVEL", def: "info", usage: "debug, info, warn or error"},
		{flag: "log-format", env: "MONOLOCK_LOG_FORMAT", def: "text", usage: "text or json (log/slog to stderr)"},
	}
}

// errUsage marks a configuration error: the process exits with status 2.
var errUsage = errors.New("monolock: invalid configuration")

// parseSettings reads args and the environment. It returns flag.ErrHelp for
// -h, having printed the usage to out, and an error wrapping errUsage for
// any unparsable or inconsistent setting.
func parseSettings(args []string, getenv func(string) string, out io.Writer) (settings, error) {
	opts := options()
	fs := flag.NewFlagSet("monolock", flag.ContinueOnError)
	fs.SetOutput(out)
	for _, o := range opts {
		o.raw, o.source = o.def, "-"+o.flag
		if v := getenv(o.env); v != "" {
			o.raw, o.source = v, "-"+o.flag+" (from env "+o.env+")"
		}
		if o.boolean {
			fs.Var((*boolText)(&o.raw), o.flag, o.usage)
		} else {
			fs.StringVar(&o.raw, o.flag, o.raw, o.usage)
		}
	}
	var s settings
	fs.BoolVar(&s.version, "version", false, "print the version and exit")
	fs.Usage = func() { usage(out, opts) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return s, err
		}
		return s, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	fs.Visit(func(f *flag.Flag) {
		for _, o := range opts {
			if o.flag == f.Name {
				o.source = "-" + o.flag
			}
		}
	})
	get := func(name string) *option {
		for _, o := range opts {
			if o.flag == name {
				return o
			}
		}
		panic("unknown option " + name)
	}
	bad := func(o *option, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", errUsage, o.source, fmt.Sprintf(format, a...))
	}

	s.listen, s.opsListen, s.adminListen = get("listen").raw, get("ops-listen").raw, get("admin-listen").raw
	s.tlsCert, s.tlsKey, s.tlsClientCA = get("tls-cert").raw, get("tls-key").raw, get("tls-client-ca").raw
	s.aclFile, s.auditLog, s.logFormat = get("acl-file").raw, get("audit-log").raw, get("log-format").raw

	for _, name := range []string{"listen", "ops-listen", "admin-listen"} {
		o := get(name)
		if o.raw == "" && name != "listen" {
			continue
		}
		if _, port, err := net.SplitHostPort(o.raw); err != nil || port == "" {
			return s, bad(o, "want host:port, got %q", o.raw)
		}
	}
	o := get("io-timeout")
	d, err := time.ParseDuration(o.raw)
	if err != nil {
		return s, bad(o, "not a duration: %q (examples: 5s, 500ms)", o.raw)
	}
	if d <= 0 {
		return s, bad(o, "must be positive, got %v", d)
	}
	s.ioTimeout = d
	o = get("tcp-fastopen")
	if s.tcpFastOpen, err = strconv.ParseBool(o.raw); err != nil {
		return s, bad(o, "want true or false, got %q", o.raw)
	}
	o = get("log-level")
	if err := s.logLevel.UnmarshalText([]byte(o.raw)); err != nil {
		return s, bad(o, "want debug, info, warn or error, got %q", o.raw)
	}
	if s.logFormat != "text" && s.logFormat != "json" {
		return s, bad(get("log-format"), "want text or json, got %q", s.logFormat)
	}
	switch {
	case s.tlsKey != "" && s.tlsCert == "":
		return s, bad(get("tls-key"), "a key without -tls-cert")
	case s.tlsCert != "" && s.tlsKey == "":
		return s, bad(get("tls-cert"), "a certificate without -tls-key")
	case s.tlsClientCA != "" && s.tlsCert == "":
		return s, bad(get("tls-client-ca"), "client CA without -tls-cert: mTLS needs TLS")
	case s.aclFile != "" && s.tlsClientCA == "":
		return s, bad(get("acl-file"), "an ACL without -tls-client-ca: identities come from client certificates")
	}
	return s, nil
}

// boolText is a boolean flag kept as text, so that flag and env share the
// parsing (and its error message) of parseSettings.
type boolText string

func (b *boolText) String() string     { return string(*b) }
func (b *boolText) Set(v string) error { *b = boolText(v); return nil }
func (b *boolText) IsBoolFlag() bool   { return true }

func usage(out io.Writer, opts []*option) {
	var b strings.Builder
	b.WriteString("Usage: monolock [flags]\n\nmonolock is a lock server: one lock claim per TCP connection, FIFO queues,\nleases as windows of silence, fencing tokens. Flag beats env beats default.\n\n")
	for _, o := range opts {
		def := o.def
		if def == "" {
			def = "empty"
		}
		arg := " value"
		if o.boolean {
			arg = " (or -" + o.flag + "=false)"
		}
		fmt.Fprintf(&b, "  -%s%s\n    \t%s\n    \tenv %s, default %s\n", o.flag, arg, o.usage, o.env, def)
	}
	b.WriteString("  -version\n    \tprint the version and exit\n")
	io.WriteString(out, b.String())
}
