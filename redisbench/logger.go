package redisbench

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// LogTo routes go-redis's own log lines (a dial that failed while a
// server was down, a pool that reconnects) to logger at debug level:
// during failover and safety runs they come by the hundred and say what
// the scenario's figures already count. go-redis keeps one logger per
// process, so the command calls this once at start; without it go-redis
// prints to stderr. Not safe to call while clients are in use.
func LogTo(logger *slog.Logger) {
	redis.SetLogger(slogPrinter{logger})
}

// slogPrinter is go-redis's internal.Logging over a slog.Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(ctx context.Context, format string, v ...any) {
	if p.l.Enabled(ctx, slog.LevelDebug) {
		p.l.DebugContext(ctx, "redisbench: go-redis: "+fmt.Sprintf(format, v...))
	}
}
