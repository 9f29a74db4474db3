package network

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Profile
	}{
		{"loopback", Loopback},
		{"rack", Rack},
		{" az ", AZ},
		{"az-lossy", AZLossy},
		{"region", Region},
		{"rtt=0", Profile{}},
		{"rtt=2ms,jitter=200us,loss=0.1%", Profile{RTT: 2 * time.Millisecond, Jitter: 200 * time.Microsecond, Loss: 0.001}},
		{"rtt=2ms, jitter=200µs, loss=0.1%, rate=100mbit", Profile{RTT: 2 * time.Millisecond, Jitter: 200 * time.Microsecond, Loss: 0.001, Rate: 100e6}},
		{"rtt=500us,rate=1.5Gbit", Profile{RTT: 500 * time.Microsecond, Rate: 1.5e9}},
		{"rtt=1ms,rate=64kbit", Profile{RTT: time.Millisecond, Rate: 64e3}},
		{"rtt=1ms,loss=100%", Profile{RTT: time.Millisecond, Loss: 1}},
		{"rtt=1ms,jitter=1ms", Profile{RTT: time.Millisecond, Jitter: time.Millisecond}},
		{"region,jitter=3ms", Profile{RTT: 30 * time.Millisecond, Jitter: 3 * time.Millisecond}},
		{"az,loss=1%", Profile{RTT: time.Millisecond, Jitter: 100 * time.Microsecond, Loss: 0.01}},
		{"az-lossy,loss=0%", Profile{RTT: time.Millisecond, Jitter: 100 * time.Microsecond}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
		// String gives what Parse reads back to the same profile.
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("Parse(%q.String() = %q) = %+v, %v; want %+v", tc.in, got.String(), again, err, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in, says string
	}{
		{"", "empty"},
		{"   ", "empty"},
		{"lan", `unknown profile "lan"`},
		{"Rack", `unknown profile "Rack"`},
		{"loopback,rtt=1ms", "loopback has no line"},
		{"jitter=1ms", "needs rtt"},
		{"rtt=1ms,foo=2", `unknown key "foo"`},
		{"rtt=1ms,rtt=2ms", "rtt given twice"},
		{"rtt=1ms,,loss=1%", "is not key=value"},
		{"rtt", "is not key=value"},
		{"rtt=", "is not key=value"},
		{"=1ms", "is not key=value"},
		{"rtt=fast", "not a duration"},
		{"rtt=5", "not a duration"},
		{"rtt=-1ms", "negative"},
		{"rtt=1ms,jitter=2ms", "exceeds rtt"},
		{"rack,jitter=1ms", "exceeds rtt"},
		{"rtt=1ms,loss=0.5", "needs a percent sign"},
		{"rtt=1ms,loss=x%", "not a percentage"},
		{"rtt=1ms,loss=NaN%", "not a percentage"},
		{"rtt=1ms,loss=101%", "outside"},
		{"rtt=1ms,loss=-1%", "outside"},
		{"rtt=1ms,rate=100", "unit of bit"},
		{"rtt=1ms,rate=100mbps", "unit of bit"},
		{"rtt=1ms,rate=fastmbit", "unit of bit"},
		{"rtt=1ms,rate=0bit", "out of range"},
		{"rtt=1ms,rate=0.1bit", "out of range"},
	} {
		_, err := Parse(tc.in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error saying %q", tc.in, tc.says)
			continue
		}
		if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q) = %v, want ErrProfile saying %q", tc.in, err, tc.says)
		}
	}
}

func TestParseOverride(t *testing.T) {
	host, p, err := ParseOverride("redlock-4=region")
	if err != nil || host != "redlock-4" || p != Region {
		t.Errorf("ParseOverride(redlock-4=region) = %q, %+v, %v", host, p, err)
	}
	host, p, err = ParseOverride("redlock-5=rtt=5ms,jitter=1ms")
	if want := (Profile{RTT: 5 * time.Millisecond, Jitter: time.Millisecond}); err != nil || host != "redlock-5" || p != want {
		t.Errorf("ParseOverride(redlock-5=rtt=5ms,jitter=1ms) = %q, %+v, %v", host, p, err)
	}
	for _, tc := range []struct{ in, says string }{
		{"region", "want host=profile"},
		{"=region", "want host=profile"},
		{"a b=region", "may hold only"},
		{"redis=loopback", "cannot be loopback"},
		{"redis=lan", "unknown profile"},
	} {
		if _, _, err := ParseOverride(tc.in); err == nil || !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ParseOverride(%q) = %v, want ErrProfile saying %q", tc.in, err, tc.says)
		}
	}
}

func TestProfileString(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		want string
	}{
		{AZ, "az"},
		{Profile{}, "rtt=0s"},
		{Profile{RTT: 2 * time.Millisecond, Jitter: 200 * time.Microsecond, Loss: 0.001, Rate: 100e6}, "rtt=2ms,jitter=200µs,loss=0.1%,rate=100mbit"},
		{Profile{RTT: time.Millisecond, Rate: 1500}, "rtt=1ms,rate=1500bit"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}
