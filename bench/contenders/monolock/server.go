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
const NoLockWatch = "not recorded: its audit log (every grant and release, with the reason expired) goes to a file or stdout no backend hands back, on wall-clock time, and its admin API is a listener the server spec has no port for: reaching either changes the spec and the backends"

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
