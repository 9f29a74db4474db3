package podagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// Paths inside a server's pod: the volume the init container copies the
// agent into, the agent there, and its socket.
const (
	Dir    = "/monolock-bench-agent"
	Binary = Dir + "/monolock-bench"
	Socket = Dir + "/agent.sock"
)

// Main is `monolock-bench pod-agent`:
//
//	pod-agent install DIR       copy this executable into DIR (the init container)
//	pod-agent serve SOCKET      supervise the server (the server container's main process)
//	pod-agent ctl SOCKET JSON   send one Request, print the Response (exec'd by the bench)
func Main(ctx context.Context, args []string, stdout io.Writer, log *slog.Logger) error {
	if len(args) < 2 {
		return errors.New("usage: pod-agent install DIR | serve SOCKET | ctl SOCKET REQUEST-JSON")
	}
	switch args[0] {
	case "install":
		return install(args[1])
	case "serve":
		err := Serve(ctx, args[1], log)
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case "ctl":
		if len(args) != 3 {
			return errors.New("usage: pod-agent ctl SOCKET REQUEST-JSON")
		}
		var req Request
		if err := json.Unmarshal([]byte(args[2]), &req); err != nil {
			return fmt.Errorf("podagent: request: %w", err)
		}
		resp, err := Ctl(args[1], req)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(resp)
	}
	return fmt.Errorf("podagent: unknown command %q", args[0])
}

// install copies the running executable into dir, for the server
// container to run from the shared volume.
func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("podagent: %w", err)
	}
	in, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("podagent: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(filepath.Join(dir, filepath.Base(Binary)), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("podagent: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("podagent: %w", err)
	}
	return out.Close()
}
