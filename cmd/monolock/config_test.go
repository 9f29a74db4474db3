package main

import (
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // substring; "" = success
		check   func(s settings) bool
	}{
		{"defaults", nil, nil, "", func(s settings) bool {
			return s.listen == "0.0.0.0:7070" && s.opsListen == "" && s.ioTimeout == 5*time.Second && s.logLevel == slog.LevelInfo && s.logFormat == "text"
		}},
		{"env over default", nil, map[string]string{"MONOLOCK_LISTEN_ADDRESS": "127.0.0.1:1", "MONOLOCK_IO_TIMEOUT": "250ms", "MONOLOCK_LOG_LEVEL": "debug", "MONOLOCK_LOG_FORMAT": "json", "MONOLOCK_OPS_LISTEN_ADDRESS": ":9090"}, "", func(s settings) bool {
			return s.listen == "127.0.0.1:1" && s.ioTimeout == 250*time.Millisecond && s.logLevel == slog.LevelDebug && s.logFormat == "json" && s.opsListen == ":9090"
		}},
		{"flag over env", []string{"-listen", "127.0.0.1:2", "-io-timeout=1s"}, map[string]string{"MONOLOCK_LISTEN_ADDRESS": "127.0.0.1:1", "MONOLOCK_IO_TIMEOUT": "bogus"}, "", func(s settings) bool {
			return s.listen == "127.0.0.1:2" && s.ioTimeout == time.Second
		}},
		{"tcp-fastopen off by default", nil, nil, "", func(s settings) bool { return !s.tcpFastOpen }},
		{"tcp-fastopen switch", []string{"-tcp-fastopen"}, nil, "", func(s settings) bool { return s.tcpFastOpen }},
		{"tcp-fastopen env", nil, map[string]string{"MONOLOCK_TCP_FASTOPEN": "true"}, "", func(s settings) bool { return s.tcpFastOpen }},
		{"tcp-fastopen flag over env", []string{"-tcp-fastopen=false"}, map[string]string{"MONOLOCK_TCP_FASTOPEN": "1"}, "", func(s settings) bool { return !s.tcpFastOpen }},
		{"bad tcp-fastopen env", nil, map[string]string{"MONOLOCK_TCP_FASTOPEN": "yes"}, "-tcp-fastopen (from env MONOLOCK_TCP_FASTOPEN): want true or false", nil},
		{"version", []string{"-version"}, nil, "", func(s settings) bool { return s.version }},
		{"bad duration flag", []string{"-io-timeout", "5"}, nil, "-io-timeout: not a duration", nil},
		{"bad duration env", nil, map[string]string{"MONOLOCK_IO_TIMEOUT": "soon"}, "from env MONOLOCK_IO_TIMEOUT", nil},
		{"zero duration", []string{"-io-timeout=0s"}, nil, "must be positive", nil},
		{"bad log level", []string{"-log-level=loud"}, nil, "-log-level", nil},
		{"bad log format", []string{"-log-format=xml"}, nil, "want text or json", nil},
		{"bad listen", []string{"-listen=7070"}, nil, "want host:port", nil},
		{"bad ops listen", nil, map[string]string{"MONOLOCK_OPS_LISTEN_ADDRESS": "localhost"}, "-ops-listen (from env", nil},
		{"key without cert", []string{"-tls-key=k.pem"}, nil, "a key without -tls-cert", nil},
		{"cert without key", []string{"-tls-cert=c.pem"}, nil, "without -tls-key", nil},
		{"client CA without cert", []string{"-tls-client-ca=ca.pem"}, nil, "client CA without -tls-cert", nil},
		{"ACL without client CA", []string{"-tls-cert=c.pem", "-tls-key=k.pem", "-acl-file=acl.json"}, nil, "an ACL without -tls-client-ca", nil},
		{"unknown flag", []string{"-lease=1s"}, nil, "flag provided but not defined", nil},
		{"stray argument", []string{"serve"}, nil, "unexpected arguments", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			s, err := parseSettings(tt.args, func(k string) string { return tt.env[k] }, &out)
			if tt.wantErr != "" {
				if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want errUsage containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if !tt.check(s) {
				t.Fatalf("settings = %+v", s)
			}
		})
	}
}

func TestHelpListsEveryFlagWithItsEnv(t *testing.T) {
	var out strings.Builder
	if _, err := parseSettings([]string{"-h"}, func(string) string { return "" }, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, o := range options() {
		if !strings.Contains(out.String(), "-"+o.flag+" ") || !strings.Contains(out.String(), "env "+o.env+",") {
			t.Errorf("-h lacks -%s / %s:\n%s", o.flag, o.env, out.String())
		}
	}
	if !strings.Contains(out.String(), "-version") {
		t.Error("-h lacks -version")
	}
}
