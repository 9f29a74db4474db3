package monolock

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/monolock/monolock-bench/bench"
)

// Server is the monolock server the contender runs against: one instance
// of cmd/monolock, with its ops HTTP server (/healthz, /metrics).
var Server = &bench.ServerSpec{
	Name:      "monolock",
	GoPackage: "github.com/monolock/monolock-bench/cmd/monolock",
	Args: func(a bench.ServerArgs) []string {
		args := []string{"-listen", a.Listen}
		if a.Ops != "" {
			args = append(args, "-ops-listen", a.Ops)
		}
		return args
	},
	Port:    7070,
	OpsPort: 9090,
	Ready:   healthy,
	// Its audit log on standard output, for the chaos watcher (WatchLock).
	RecordArgs: []string{"-audit-log", "-"},
}

// readyTimeout bounds one readiness check.
const readyTimeout = time.Second

// healthy succeeds once GET /healthz on the ops port answers 200; without
// an ops address, accepting connections is all there is to check.
func healthy(ctx context.Context, _, opsAddr string) error {
	if opsAddr == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+opsAddr+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("monolock: GET /healthz: %s", resp.Status)
	}
	return nil
}
