package network

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Profile describes the link between the bench and one emulated host: the
// round trip it adds, how that varies, what share of packets it loses and
// its bandwidth. The zero Profile is a line that adds nothing (the custom
// profile "rtt=0"); Loopback is the profile without any line.
//
// Jitter's distribution: each packet's one-way hold is RTT/2 plus a value
// drawn uniformly from [-Jitter/2, +Jitter/2], so a round trip (two
// packets) lies within RTT ± Jitter with a triangular distribution. A
// packet never overtakes an earlier one on the same path (a wire keeps
// order), which can add up to Jitter to a packet sent right behind a
// slower one.
type Profile struct {
	// Name is the named profile this one is ("rack", "az", ...), or ""
	// for a custom one or a named one with overrides.
	Name string
	// RTT is the round trip the line adds between the bench and the host.
	RTT time.Duration
	// Jitter is the spread of the round trip: RTT ± Jitter (see above).
	Jitter time.Duration
	// Loss is the probability that a packet is dropped, per packet and
	// direction, in [0, 1].
	Loss float64
	// Rate is the host link's bandwidth in bits per second in each
	// direction; 0 is unlimited.
	Rate int64
}

// The named profiles. Published figures they follow: inside one AWS AZ
// 0.2–0.4 ms; between AZs about 1 ms; across regions tens of ms.
var (
	// Loopback is today's path: no emulated hosts, no line.
	Loopback = Profile{Name: "loopback"}
	// Rack is ≈ 0.3 ms RTT, as between hosts inside one AZ.
	Rack = Profile{Name: "rack", RTT: 300 * time.Microsecond}
	// AZ is ≈ 1 ms RTT ± 10 %, as between availability zones.
	AZ = Profile{Name: "az", RTT: time.Millisecond, Jitter: 100 * time.Microsecond}
	// AZLossy is AZ with 0.5 % of packets lost.
	AZLossy = Profile{Name: "az-lossy", RTT: time.Millisecond, Jitter: 100 * time.Microsecond, Loss: 0.005}
	// Region is ≈ 30 ms RTT, as between regions.
	Region = Profile{Name: "region", RTT: 30 * time.Millisecond}
)

var named = []Profile{Loopback, Rack, AZ, AZLossy, Region}

// ErrProfile is wrapped by every error of Parse and ParseOverride.
var ErrProfile = errors.New("network: bad profile")

const profileSyntax = "loopback, rack, az, az-lossy, region, or rtt=…[,jitter=…][,loss=…%][,rate=…] (a named profile may come first: az,loss=1%)"

// Parse reads a profile: a name (loopback, rack, az, az-lossy, region), a
// custom list of key=value settings such as "rtt=2ms,jitter=200us,loss=0.1%,rate=100mbit",
// or a name followed by settings that replace its own ("region,jitter=3ms").
// Keys: rtt and jitter are Go durations; loss is a percentage with its
// sign; rate is a number with bit, kbit, mbit or gbit (per second).
func Parse(s string) (Profile, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Profile{}, fmt.Errorf("%w: empty; want %s", ErrProfile, profileSyntax)
	}
	items := strings.Split(s, ",")
	var p Profile
	base := ""
	if !strings.Contains(items[0], "=") {
		base = strings.TrimSpace(items[0])
		found := false
		for _, n := range named {
			if n.Name == base {
				p, found = n, true
			}
		}
		switch {
		case found:
		case base == "rtt" || base == "jitter" || base == "loss" || base == "rate":
			return Profile{}, fmt.Errorf("%w: %q: %q is not key=value; want %s", ErrProfile, s, base, profileSyntax)
		default:
			return Profile{}, fmt.Errorf("%w: unknown profile %q; want %s", ErrProfile, base, profileSyntax)
		}
		items = items[1:]
		if len(items) == 0 {
			return p, nil
		}
		if p.IsLoopback() {
			return Profile{}, fmt.Errorf("%w: %q: loopback has no line, so it takes no settings", ErrProfile, s)
		}
		p.Name = ""
	}
	seen := map[string]bool{}
	for _, item := range items {
		key, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" || value == "" {
			return Profile{}, fmt.Errorf("%w: %q: %q is not key=value; want %s", ErrProfile, s, item, profileSyntax)
		}
		if seen[key] {
			return Profile{}, fmt.Errorf("%w: %q: %s given twice", ErrProfile, s, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "rtt":
			p.RTT, err = parseDuration(value)
		case "jitter":
			p.Jitter, err = parseDuration(value)
		case "loss":
			p.Loss, err = parsePercent(value)
		case "rate":
			p.Rate, err = parseRate(value)
		default:
			err = fmt.Errorf("unknown key %q (keys: rtt, jitter, loss, rate)", key)
		}
		if err != nil {
			return Profile{}, fmt.Errorf("%w: %q: %w", ErrProfile, s, err)
		}
	}
	if base == "" && !seen["rtt"] {
		return Profile{}, fmt.Errorf("%w: %q: a custom profile needs rtt=…", ErrProfile, s)
	}
	if p.Jitter > p.RTT {
		return Profile{}, fmt.Errorf("%w: %q: jitter %v exceeds rtt %v (a one-way delay would go below zero)", ErrProfile, s, p.Jitter, p.RTT)
	}
	return p, nil
}

// ParseOverride reads a per-host override "host=profile", such as
// "redlock-4=region" or "redlock-5=rtt=5ms,jitter=1ms": the host name is
// everything before the first '='.
func ParseOverride(s string) (host string, p Profile, err error) {
	host, spec, ok := strings.Cut(s, "=")
	host = strings.TrimSpace(host)
	if !ok || host == "" {
		return "", Profile{}, fmt.Errorf("%w: override %q: want host=profile, e.g. db-2=region", ErrProfile, s)
	}
	if err := checkHostName(host); err != nil {
		return "", Profile{}, fmt.Errorf("%w: override %q: %w", ErrProfile, s, err)
	}
	p, err = Parse(spec)
	if err != nil {
		return "", Profile{}, err
	}
	if p.IsLoopback() {
		return "", Profile{}, fmt.Errorf("%w: override %q: a host on an emulated network cannot be loopback (use rtt=0 for a line that adds nothing)", ErrProfile, s)
	}
	return host, p, nil
}

// IsLoopback reports whether p is Loopback: no emulated network at all.
func (p Profile) IsLoopback() bool { return p.Name == Loopback.Name }

// String returns the profile's name, or its settings in the form Parse
// reads.
func (p Profile) String() string {
	if p.Name != "" {
		return p.Name
	}
	parts := []string{"rtt=" + p.RTT.String()}
	if p.Jitter != 0 {
		parts = append(parts, "jitter="+p.Jitter.String())
	}
	if p.Loss != 0 {
		parts = append(parts, "loss="+strconv.FormatFloat(p.Loss*100, 'g', -1, 64)+"%")
	}
	if p.Rate != 0 {
		parts = append(parts, "rate="+formatRate(p.Rate))
	}
	return strings.Join(parts, ",")
}

func parseDuration(v string) (time.Duration, error) {
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 300us or 2ms", v)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative", v)
	}
	return d, nil
}

func parsePercent(v string) (float64, error) {
	num, ok := strings.CutSuffix(v, "%")
	if !ok {
		return 0, fmt.Errorf("loss %q needs a percent sign, e.g. %s%%", v, v)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("loss %q is not a percentage", v)
	}
	if f < 0 || f > 100 {
		return 0, fmt.Errorf("loss %q is outside 0%%–100%%", v)
	}
	return f / 100, nil
}

var rateUnits = []struct {
	suffix string
	scale  float64
}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}

func parseRate(v string) (int64, error) {
	lower := strings.ToLower(v)
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(lower, u.suffix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				break
			}
			bits := f * u.scale
			if bits < 1 || bits > math.MaxInt64/2 {
				return 0, fmt.Errorf("rate %q is out of range (1bit … 1000000gbit)", v)
			}
			return int64(bits), nil
		}
	}
	return 0, fmt.Errorf("rate %q is not a number with a unit of bit, kbit, mbit or gbit (per second), e.g. 100mbit", v)
}

func formatRate(bits int64) string {
	for _, u := range rateUnits {
		if bits%int64(u.scale) == 0 {
			return strconv.FormatInt(bits/int64(u.scale), 10) + u.suffix
		}
	}
	return strconv.FormatInt(bits, 10) + "bit"
}
