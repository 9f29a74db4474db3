package host

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestRaiseFileLimit(t *testing.T) {
	const reserve = 256
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
	most := l.MaxSessions(2, reserve)
	t.Logf("RLIMIT_NOFILE soft %d (was %d) hard %d, fs.nr_open %d, %d files open: at most %d monolock sessions with clients and server in this process, %d with the server elsewhere",
		l.Soft, l.SoftBefore, l.Hard, l.NrOpen, l.InUse, most, l.MaxSessions(1, reserve))
	if err := l.Check(most, 2, reserve); err != nil {
		t.Fatalf("the largest C that fits does not fit: %v", err)
	}
	err = l.Check(most+1, 2, reserve)
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || !strings.Contains(err.Error(), fmt.Sprintf("run at most %d sessions", most)) {
		t.Fatalf("one session more: err = %v", err)
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
