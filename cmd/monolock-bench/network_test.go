package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/monolock/monolock-bench/bench/results"
)

func TestParseNetworks(t *testing.T) {
	for _, c := range []struct {
		one, several string
		profiles     []string
		hosts        map[string]string
	}{
		{"", "", []string{"loopback"}, nil},
		{"az", "", []string{"az"}, nil},
		{"rtt=2ms,jitter=200us,loss=0.1%", "", []string{"rtt=2ms,jitter=200µs,loss=0.1%"}, nil},
		{"az,redlock-2=region,redlock-3=rtt=5ms,jitter=1ms", "", []string{"az"}, map[string]string{"redlock-2": "region", "redlock-3": "rtt=5ms,jitter=1ms"}},
		{"", "loopback,rack,az,region", []string{"loopback", "rack", "az", "region"}, nil},
		{"", "loopback,rtt=2ms,jitter=200us,az,loss=1%", []string{"loopback", "rtt=2ms,jitter=200µs", "rtt=1ms,jitter=100µs,loss=1%"}, nil},
	} {
		plan, err := parseNetworks(c.one, c.several)
		if err != nil {
			t.Errorf("parseNetworks(%q, %q): %v", c.one, c.several, err)
			continue
		}
		var got []string
		for _, p := range plan.profiles {
			got = append(got, p.String())
		}
		if strings.Join(got, " ") != strings.Join(c.profiles, " ") {
			t.Errorf("parseNetworks(%q, %q) profiles %q, want %q", c.one, c.several, got, c.profiles)
		}
		if len(plan.hosts) != len(c.hosts) {
			t.Errorf("parseNetworks(%q, %q) overrides %v, want %v", c.one, c.several, plan.hosts, c.hosts)
		}
		for h, want := range c.hosts {
			if p, ok := plan.hosts[h]; !ok || p.String() != want {
				t.Errorf("parseNetworks(%q, %q) override %s = %v, want %s", c.one, c.several, h, p, want)
			}
		}
	}
}

func TestParseNetworksErrors(t *testing.T) {
	for _, c := range []struct{ one, several, want string }{
		{"lan", "", "unknown profile"},
		{"rtt=fast", "", "rtt"},
		{"jitter=1ms", "", "must follow a profile"},
		{"az,region", "", "for several use --networks"},
		{"az", "rack", "not both"},
		{"", "az,az", "twice"},
		{"redlock-2=region", "", "no profile"},
		{"loopback,redlock-2=region", "", "other than loopback"},
		{"az,redlock-2=loopback", "", "cannot be loopback"},
	} {
		_, err := parseNetworks(c.one, c.several)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseNetworks(%q, %q) = %v, want a usage error saying %q", c.one, c.several, err, c.want)
		}
	}
}

// TestNetworkNeedsRoot: a profile other than loopback asked by a user
// other than root is refused before anything starts, saying why.
func TestNetworkNeedsRoot(t *testing.T) {
	plan, err := parseNetworks("az", "")
	if err != nil {
		t.Fatal(err)
	}
	err = checkNetworkPrivileges(plan, 1000)
	if !errors.Is(err, errNeedsRoot) || !strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "--network loopback") {
		t.Fatalf("checkNetworkPrivileges as uid 1000 = %v, want it to say the bench needs root", err)
	}
	if err := checkNetworkPrivileges(plan, 0); err != nil {
		t.Fatalf("as root: %v", err)
	}
	loop, _ := parseNetworks("", "")
	if err := checkNetworkPrivileges(loop, 1000); err != nil {
		t.Fatalf("loopback needs no root: %v", err)
	}
}

// TestNetworkFlags: emulated profiles take the local backend by default,
// the containers backend when asked, and refuse external; the quick suite adds its profile for latency only.
func TestNetworkFlags(t *testing.T) {
	o, err := parseRunFlags([]string{"--networks", "loopback,az", "--scenarios", "latency,throughput"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.backend != "local" || len(o.phases) != 2 || len(o.phases[1].scenarios) != 2 {
		t.Fatalf("backend %q, %d phases", o.backend, len(o.phases))
	}
	if os.Geteuid() == 0 {
		if o, err := parseRunFlags([]string{"--network", "az", "--backend", "containers"}, io.Discard); err != nil || o.backend != "containers" || len(o.phases) != 1 {
			t.Fatalf("containers with a profile: %v, backend %q, want it taken", err, o.backend)
		}
	}
	if _, err := parseRunFlags([]string{"--network", "az", "--backend", "external", "--monolock-addr", "127.0.0.1:1"}, io.Discard); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--backend local or containers") {
		t.Fatalf("external with a profile: %v, want a usage error naming --backend local or containers", err)
	}
	if os.Geteuid() != 0 {
		return // the quick suite adds its profile only as root (and notes why not)
	}
	o, err = parseRunFlags([]string{"--quick", "--backend", "local", "--scenarios", "latency,throughput"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.phases) != 2 || o.phases[1].profile.Name != quickProfile.Name || len(o.phases[1].scenarios) != 1 || o.phases[1].scenarios[0].Name != quickScenario {
		t.Fatalf("quick phases %+v, want loopback then %s for %s only", o.phases, quickProfile.Name, quickScenario)
	}
	if o.phases[1].profile.RTT != time.Millisecond || o.phases[1].backend != "local" {
		t.Fatalf("quick profile RTT %v on backend %q, want 1ms on local", o.phases[1].profile.RTT, o.phases[1].backend)
	}
	// The profile's claims compare monolock's variants with Redis; the
	// floors stay beside them, the other locks do not start there.
	if got, want := strings.Join(contenderNames(o.phases[1].contenders), ","), "monolock,monolock-warm,monolock-tfo,redis,tcp-floor,redis-floor"; got != want {
		t.Errorf("quick profile's contenders %s, want %s", got, want)
	}
	for i, want := range []bool{true, false} { // loopback keeps its other variants, the quick profile the one worker's only
		var others bool
		for _, v := range o.phases[i].scenarios[0].Variants(true) {
			others = others || v.Params.Load == results.LoadOpen || v.Params.Workers > 1
		}
		if others != want {
			t.Errorf("phase %s: variants besides w1 %v, want %v", o.phases[i].profile.Name, others, want)
		}
	}
	// The quick suite's own backend stays the run's choice.
	o, err = parseRunFlags([]string{"--quick", "--scenarios", "latency"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.backend != "" || len(o.phases) != 2 {
		t.Fatalf("quick without --backend: backend %q, %d phases", o.backend, len(o.phases))
	}
}

// TestThroughputWindowScalesWithRTT: under region (30 ms) a quick
// throughput step lasts at least 100 round trips, so that a worker
// completes tens of cycles; on loopback it keeps its quick window.
func TestThroughputWindowScalesWithRTT(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("emulated profiles need root")
	}
	o, err := parseRunFlags([]string{"--quick", "--networks", "loopback,region", "--scenarios", "throughput"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.phases) != 2 {
		t.Fatalf("%d phases, want loopback and region", len(o.phases))
	}
	for i, least := range []time.Duration{0, 100 * 30 * time.Millisecond} {
		for _, v := range o.phases[i].scenarios[0].Variants(true) {
			if v.Estimate < least || (least == 0 && v.Estimate > time.Second) {
				t.Errorf("%s: %s plans %v, want at least %v (and a quick window on loopback)", o.phases[i].profile, v.Name, v.Estimate, least)
			}
		}
	}
}
