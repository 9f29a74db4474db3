package podagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// ctlTimeout bounds one request: a graceful stop waits its grace and a
// kill for the exit.
const ctlTimeout = 2 * time.Minute

// Ctl sends req to the agent listening at path and returns its answer; an
// answer carrying an error is returned as one.
func Ctl(path string, req Request) (Response, error) {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return Response{}, fmt.Errorf("podagent: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ctlTimeout))
	out, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("podagent: %w", err)
	}
	if _, err := c.Write(append(out, '\n')); err != nil {
		return Response{}, fmt.Errorf("podagent: %w", err)
	}
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		return Response{}, fmt.Errorf("podagent: no answer to %s: %w", req.Op, err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return Response{}, fmt.Errorf("podagent: answer to %s: %w", req.Op, err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("%s", resp.Error)
	}
	return resp, nil
}

// ReadCPU asks the agent of the pod at ip for its container's CPU time on
// MetricsPort.
func ReadCPU(ctx context.Context, client *http.Client, ip string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(ip, strconv.Itoa(MetricsPort))+"/cpu", nil)
	if err != nil {
		return Response{}, fmt.Errorf("podagent: %w", err)
	}
	r, err := client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("podagent: %w", err)
	}
	defer r.Body.Close()
	var resp Response
	if err := json.NewDecoder(r.Body).Decode(&resp); err != nil {
		return Response{}, fmt.Errorf("podagent: cpu of %s: %w", ip, err)
	}
	if resp.Error != "" {
		return resp, fmt.Errorf("%s", resp.Error)
	}
	return resp, nil
}
