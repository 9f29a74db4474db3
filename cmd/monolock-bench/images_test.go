package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// images takes exactly one of build and clean; anything else is bad usage
// and touches no engine.
func TestImagesUsage(t *testing.T) {
	for _, args := range [][]string{{"images"}, {"images", "push"}, {"images", "build", "extra"}} {
		var stdout, stderr bytes.Buffer
		if code := dispatch(context.Background(), args, &stdout, &stderr); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
		if !strings.Contains(stderr.String(), "monolock-bench images build") {
			t.Errorf("%q: usage not shown:\n%s", args, stderr.String())
		}
	}
}
