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
}

// NoLockWatch is why the chaos history has no server record of
// monolock's grants and expiries, although the server keeps one.
const NoLockWatch = "not recorded: monolock's audit log has every grant and release with its token and reason (expired among them), but the bench runs the server without -audit-log, the log goes to a file or stdout that no backend hands back to the bench, and its times are wall-clock UTC, not the history's CLOCK_MONOTONIC; the admin API (GET /api/locks) is a third listener bench.ServerSpec has no port for, and polling it would miss a short hold's grant and end; reaching either is a change to the server spec and the backends"

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
