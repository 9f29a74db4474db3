package bench

import (
	"math"
	"strings"
	"testing"
)

func TestMaxSessionsAndCheck(t *testing.T) {
	capped := FileLimits{Process: "bench", Soft: 20000, Hard: 20000, InUse: 44, NrOpen: 1048576}
	for _, tc := range []struct {
		l         FileLimits
		perSess   int
		reserve   int
		want      int
		checkC    int
		errSubstr []string
	}{
		{capped, 1, 256, 19700, 19700, nil},
		{capped, 2, 256, 9850, 10000, []string{"10000 sessions need 20300 open files in the bench process", "RLIMIT_NOFILE is 20000 (hard 20000)", "run at most 9850 sessions", "ulimit -Hn", "fs.nr_open = 1048576"}},
		{capped, 0, 0, math.MaxInt, 1_000_000, nil},
		{FileLimits{Soft: 300, InUse: 50}, 0, 256, 0, 1, []string{"run at most 0", "0 per session + 256 reserve + 50 in use"}},
		{FileLimits{Process: "server", Soft: 1024, Hard: 4096, InUse: 10}, 1, 100, 914, 1000, []string{"raise the soft limit to the hard limit 4096"}},
		{FileLimits{Soft: 100, InUse: 90}, 1, 256, 0, 1, []string{"run at most 0"}},
	} {
		if got := tc.l.MaxSessions(tc.perSess, tc.reserve); got != tc.want {
			t.Errorf("%+v MaxSessions(%d, %d) = %d, want %d", tc.l, tc.perSess, tc.reserve, got, tc.want)
		}
		err := tc.l.Check(tc.checkC, tc.perSess, tc.reserve)
		if (err == nil) != (tc.errSubstr == nil) {
			t.Errorf("Check(%d): %v", tc.checkC, err)
			continue
		}
		for _, s := range tc.errSubstr {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Check(%d) error lacks %q:\n%v", tc.checkC, s, err)
			}
		}
	}
}
