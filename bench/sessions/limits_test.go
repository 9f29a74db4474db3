package sessions

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestRaiseFileLimit(t *testing.T) {
	l, err := RaiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	if l.Soft != l.Hard || l.Soft < l.SoftBefore || l.InUse < 3 {
		t.Fatalf("limits %+v", l)
	}
	self, err := ProcessFileLimits(os.Getpid(), "self")
	if err != nil {
		t.Fatal(err)
	}
	if self.Soft != l.Soft || self.Hard != l.Hard {
		t.Fatalf("prlimit of self %+v, getrlimit %+v", self, l)
	}
	most := l.MaxSessions(2, DefaultReserve)
	t.Logf("RLIMIT_NOFILE soft %d (was %d) hard %d, fs.nr_open %d, %d files open: at most %d monolock sessions with clients and server in this process, %d with the server elsewhere",
		l.Soft, l.SoftBefore, l.Hard, l.NrOpen, l.InUse, most, l.MaxSessions(1, DefaultReserve))
	if err := l.Check(most, 2, DefaultReserve); err != nil {
		t.Fatalf("the largest C that fits does not fit: %v", err)
	}
	err = l.Check(most+1, 2, DefaultReserve)
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || !strings.Contains(err.Error(), fmt.Sprintf("run at most %d sessions", most)) {
		t.Fatalf("one session more: err = %v", err)
	}
}

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

func TestParseLimits(t *testing.T) {
	text := "Limit                     Soft Limit           Hard Limit           Units     \nMax processes             unlimited            unlimited            processes \nMax open files            20000                40000                files     \n"
	soft, hard, err := parseLimits(text)
	if err != nil || soft != 20000 || hard != 40000 {
		t.Fatalf("parseLimits = %d, %d, %v; want 20000, 40000", soft, hard, err)
	}
	if _, _, err := parseLimits("Max open files unlimited unlimited files\n"); err == nil {
		t.Fatal("unlimited parsed as a number")
	}
}
