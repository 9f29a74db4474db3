package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/load/shard"
)

// workerIndexEnv holds a worker's shard index: an indexed Job sets it in
// every pod.
const workerIndexEnv = "JOB_COMPLETION_INDEX"

// workerMain is `monolock-bench worker SPEC-JSON`: one shard of a sharded
// scale variant, its report as one JSON line on stdout.
func workerMain(ctx context.Context, args []string, contenders []bench.Contender, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: monolock-bench worker SPEC-JSON (the shard index in $" + workerIndexEnv + ")")
	}
	var spec shard.Spec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		return fmt.Errorf("worker: spec: %w", err)
	}
	index, err := strconv.Atoi(os.Getenv(workerIndexEnv))
	if err != nil {
		return fmt.Errorf("worker: $%s: %w", workerIndexEnv, err)
	}
	var c *bench.Contender
	for i := range contenders {
		if contenders[i].Name == spec.Contender {
			c = &contenders[i]
		}
	}
	if c == nil {
		return fmt.Errorf("worker: unknown contender %q", spec.Contender)
	}
	l, err := c.Open(ctx, spec.Addrs, spec.Lease)
	if err != nil {
		return fmt.Errorf("worker: open %s: %w", c.Name, err)
	}
	defer l.Close()
	r, err := shard.Run(ctx, l, spec, index)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(r)
}
