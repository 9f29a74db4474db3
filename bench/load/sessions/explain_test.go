package sessions

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("dial: %w", syscall.EMFILE), "out of open files"},
		{fmt.Errorf("dial: %w", syscall.EADDRNOTAVAIL), "out of ephemeral ports"},
		{errors.New("other"), "other"},
	} {
		got := explain(tc.err)
		if !errors.Is(got, tc.err) || !strings.Contains(got.Error(), tc.want) {
			t.Errorf("explain(%v) = %v", tc.err, got)
		}
	}
}
