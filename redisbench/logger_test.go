package redisbench

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// go-redis's lines reach slog at debug level, and only there.
func TestSlogPrinter(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var buf bytes.Buffer
		p := slogPrinter{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))}
		p.Printf(context.Background(), "redis: %s failed to dial: %v", "127.0.0.1:1", "refused")
		got := buf.String()
		if level == slog.LevelDebug {
			if !strings.Contains(got, "level=DEBUG") || !strings.Contains(got, "redis: 127.0.0.1:1 failed to dial: refused") {
				t.Errorf("debug handler got %q", got)
			}
		} else if got != "" {
			t.Errorf("info handler got %q, want nothing", got)
		}
	}
}
