package monolock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/monolock/monolock-bench/bench"
	"github.com/monolock/monolock-bench/bench/results"
	"github.com/monolock/monolock-bench/monolock"
)

// WarmSpares is the number of pre-dialled spare connections of the
// monolock-warm contender: the eight workers of the latency scenario's w8
// find a ready connection each; with more workers (throughput) a claim
// that finds none dials as the plain client does while the spares refill
// in the background. Eight idle connections are the cost on the server.
const WarmSpares = 8

// WarmContender returns the monolock-warm row: the same server, the client
// keeping WarmSpares connections dialled in advance so that an acquire is
// one round trip.
func WarmContender() bench.Contender {
	set := Settings()
	set["claim"] = "one TCP connection per claim, plaintext, taken from pre-dialled spares when one is ready"
	set["spares"] = fmt.Sprint(WarmSpares)
	set["spare_max_age"] = monolock.DefaultSpareMaxAge.String() + " (default, below the server's 5s io-timeout)"
	return bench.Contender{
		Name: "monolock-warm", Label: "monolock-warm", Family: "monolock", Colour: "#5b8fe0",
		Server:          Server,
		Settings:        set,
		Scenarios:       notScale,
		WatchLock:       WatchLock,
		WatchLockSource: WatchSource,
		Caps:            VariantCaps,
		New: func(_ context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			return New(monolock.Config{Address: addrs[0], Spares: WarmSpares}, lease), nil
		},
		Counters: NewCounters,
		Claims:   kinds(append(VariantClaims("monolock-warm", "with warm spares"), warmTargets()...)),
		Notes:    []string{WarmNote},
	}
}

// notScale are the scenarios of the client variants: every one but
// scale, where a session costs what it costs with the plain client (the
// variants change how a claim's connection is dialled; spares add a fixed
// WarmSpares connections per Locker, whatever the sessions), and chaos,
// where each step costs a whole fault schedule and the variants' safety
// (heartbeats, the client's pessimism, the token) is the plain client's.
var notScale = []string{"latency", "throughput", "handover", "fairness", "safety", "failover", "workload"}

// VariantCaps are the variants the client variants do not run, for the
// suite's time budget: where a claim's dial does not enter the figures,
// and in quick runs everything but latency, where it does.
var VariantCaps = []bench.Cap{
	{Scenario: "safety", Variant: "*", Reason: "who holds the lock is decided by the server and the lease, which are monolock's: how a claim's connection is dialled does not change it"},
	{Scenario: "handover", Variant: "*", Reason: "the waiter is connected and queued before the holder lets go: the grant is the server's push, the same for every client variant (how a claim's connection is dialled enters latency, throughput and failover)"},
	{Scenario: "failover", Variant: "graceful-restart", Reason: "a graceful restart differs from restart in the server's drain, the same for every client variant; restart measures how the variant's dial comes back"},
	{Scenario: "fairness", Variant: "*", Reason: "the order of grants is the server's FIFO queue, the same for every client variant (Jain index 0.9998, 0.9999 and 0.9998 for monolock, -warm and -tfo in the full run 20261203T151155Z)"},
	{Scenario: "workload", Variant: "*", Reason: "a workload's clients keep their Lockers open: the steady state is monolock's (the dial enters latency and failover)"},
	{Scenario: "[^l]*", Variant: "*", QuickOnly: true, Reason: "quick: the client variants run latency only (the full run measures the rest)"},
}

// FastOpenServer is the monolock server with TCP Fast Open on its
// listener: the same binary as Server with -tcp-fastopen, and the
// namespaced sysctl that lets a server accept data in the SYN (bit 0x2;
// 3 keeps the client bit too). It is a server of its own so that the
// plain contenders keep a server without TFO.
var FastOpenServer = &bench.ServerSpec{
	Name:      "monolock-tfo",
	GoPackage: Server.GoPackage,
	Args: func(a bench.ServerArgs) []string {
		return append(Server.Args(a), "-tcp-fastopen")
	},
	Port:       Server.Port,
	OpsPort:    Server.OpsPort,
	Ready:      healthy,
	Sysctls:    map[string]string{"net.ipv4.tcp_fastopen": "3"},
	RecordArgs: Server.RecordArgs,
}

// FastOpenContender returns the monolock-tfo row: the client dialling
// each claim with TCP Fast Open against FastOpenServer. Whether the SYN
// really carried the ACQUIRE is read from the kernel's counters during
// each run (counts tcp_fastopen_active, …); the client needs bit 0x1 of
// net.ipv4.tcp_fastopen in the bench's own namespace.
func FastOpenContender() bench.Contender {
	set := Settings()
	set["claim"] = "one TCP connection per claim, plaintext, dialled with TCP Fast Open (TCP_FASTOPEN_CONNECT): the ACQUIRE rides in the SYN once a cookie is cached"
	set["server"] = "cmd/monolock -tcp-fastopen; sysctl net.ipv4.tcp_fastopen=3 in the server's namespace (containers)"
	set["tfo_evidence"] = "kernel TcpExt counters of the bench's namespace during the span: TCPFastOpenActive (SYN data accepted), TCPFastOpenActiveFail"
	return bench.Contender{
		Name: "monolock-tfo", Label: "monolock-tfo", Family: "monolock", Colour: "#0b3a80",
		Server:          FastOpenServer,
		Settings:        set,
		Scenarios:       notScale,
		WatchLock:       WatchLock,
		WatchLockSource: WatchSource,
		Caps:            VariantCaps,
		New: func(_ context.Context, addrs []string, lease time.Duration, _ bench.OpenOptions) (bench.Locker, error) {
			return New(monolock.Config{Address: addrs[0], TCPFastOpen: true}, lease), nil
		},
		Counters: NewCounters,
		Claims:   kinds(append(append(VariantClaims("monolock-tfo", "with TCP Fast Open"), fastOpenInEffect()), fastOpenTargets()...)),
		Notes:    []string{FastOpenNote},
	}
}

// Notes of the variants: what they cost, which a run does not measure.
const (
	WarmNote     = "Warm spares (monolock-warm): the client keeps connections dialled in advance, so an uncontended acquire is one round trip like Redis SET NX on a pooled connection. The cost is an idle connection and a file descriptor per spare on the server and the client, and a re-dial of each spare every few seconds (before the server's io-timeout) even when no lock is asked for. Use it when acquires are frequent and their latency matters; a TLS server benefits most, since a spare also has its TLS handshake done."
	FastOpenNote = "TCP Fast Open (monolock-tfo): the ACQUIRE rides in the SYN once the client holds a cookie, saving the handshake without idle connections. It needs the kernel to allow it on both sides (net.ipv4.tcp_fastopen: 0x1 on the client, 0x2 on the server) and a network path that does not strip the option, and falls back silently otherwise. A SYN with data may be replayed by the network: the duplicate connection's claim is reset and released by the server, the client never sees it."
)

// VariantClaims are the claims checked for a monolock client variant (how
// names it: "with warm spares"): the acquisition-latency claim, as for
// monolock.
func VariantClaims(subject, how string) []results.ClaimRule {
	var r results.ClaimRule
	for _, c := range Claims() {
		if c.ID == "acquire-latency" {
			r = c
		}
	}
	r.ID += "-" + subject
	r.Subject = subject
	r.Claim = strings.TrimSuffix(r.Claim, ".") + " (" + how + ")."
	r.Statement = "Uncontended (latency, w1), " + subject + "'s median acquire p50 is within a factor of the Redis contender's."
	return []results.ClaimRule{r}
}

// fastOpenInEffect is the check that monolock-tfo's acquisitions really
// rode in the SYN during the latency run: without it the variant measured
// is a plain dial and its figures say nothing about TFO.
func fastOpenInEffect() results.ClaimRule {
	return results.ClaimRule{
		ID:        "tfo-in-effect",
		Claim:     "With TCP Fast Open the ACQUIRE rides in the SYN.",
		Statement: "monolock-tfo uncontended (latency, w1): most acquisitions' SYN data was accepted by the server (kernel counter TCPFastOpenActive per cycle).",
		Threshold: "holds when TCPFastOpenActive per completed cycle ≥ 0.9 in every repetition; fails when below in every repetition (TFO fell back: a kernel setting or the path refused it)",
		Scenario:  "latency", Variant: "w1", Subject: "monolock-tfo", Metric: "tfo_per_cycle",
		Derive: &results.Derivation{Times: []string{"tcp_fastopen_active"}, Per: "cycles"},
		Label:  "acquisitions with SYN data per cycle",
		// The first acquisition fetches the cookie and the warm-up reuses it;
		// 10% slack for a cookie renewed mid-run.
		Op: results.AtLeast, Than: results.ClaimBound{Value: 0.9},
		Spread: results.SpreadRange,
	}
}

// The targets of issue 15, reported as claims so that every run reads them
// (they are never asserted in tests: the machine decides). Each holds or
// fails on the whole spread of the repetitions, as the other claims.

// The targets of issue 25 under the az network profile (1 ms RTT ± 10%):
// warm spares and TCP Fast Open win back the handshake's round trip, so an
// acquire costs no more than Redis SET NX on a pooled connection, within
// 10%; a claim on a new connection pays two round trips.

// networkProfile is the profile the network targets are set at.
const networkProfile = "az"

// againstRedisAt is subject's acquire p50 at most 1.1 × redis's under the
// network profile.
func againstRedisAt(subject, how string) results.ClaimRule {
	return results.ClaimRule{
		ID:        "target-" + networkProfile + "-latency-" + subject,
		Claim:     "Target: " + how + " an uncontended acquire over a real round trip costs no more than Redis SET NX, within 10%.",
		Statement: "Under " + networkProfile + ", uncontended (latency, w1), " + subject + "'s acquire p50 is at most 1.1 × the Redis contender's.",
		Threshold: "holds when " + subject + " ≤ 1.1 × redis for every pairing of repetitions (min/max spread); fails when above for every pairing",
		Scenario:  "latency", Network: networkProfile, Variant: "w1", Subject: subject, Metric: results.LatencyMetrics.AcquireP50.Name,
		Op: results.AtMost, Than: results.ClaimBound{Contender: "redis", Factor: 1.1},
		Spread: results.SpreadRange,
	}
}

// coldInRoundTrips is monolock's acquire on a new connection at two round
// trips of the network profile, within 20%: the handshake and the
// request.
func coldInRoundTrips() results.ClaimRule {
	return results.ClaimRule{
		ID:        "target-" + networkProfile + "-cold-rtts",
		Claim:     "Target: a claim on a new connection costs two round trips, the handshake and the request.",
		Statement: "Under " + networkProfile + ", uncontended (latency, w1), monolock's acquire p50 is 2 measured round trips, within 20%.",
		Threshold: "holds when 2 RTT / 1.2 ≤ monolock ≤ 1.2 × 2 RTT for every repetition, the RTT the median of the profile's measured paths; fails when outside for every repetition",
		Scenario:  "latency", Network: networkProfile, Variant: "w1", Subject: "monolock", Metric: results.LatencyMetrics.AcquireP50.Name,
		Op: results.Within, Than: results.ClaimBound{RTTs: 2, Factor: 1.2},
		Spread: results.SpreadRange,
	}
}

func warmTargets() []results.ClaimRule {
	return append([]results.ClaimRule{againstRedisAt("monolock-warm", "with warm spares"), {
		ID:        "target-warm-latency",
		Claim:     "Target: with warm spares an uncontended acquire costs no more than Redis SET NX, within 10%.",
		Statement: "Uncontended (latency, w1), monolock-warm's acquire p50 is at most 1.1 × the Redis contender's.",
		Threshold: "holds when monolock-warm ≤ 1.1 × redis for every pairing of repetitions (min/max spread); fails when above for every pairing",
		Scenario:  "latency", Variant: "w1", Subject: "monolock-warm", Metric: results.LatencyMetrics.AcquireP50.Name,
		Op: results.AtMost, Than: results.ClaimBound{Contender: "redis", Factor: 1.1},
		Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "monolock"}},
	}}, variantCostTargets("monolock-warm")...)
}

func fastOpenTargets() []results.ClaimRule {
	return append([]results.ClaimRule{againstRedisAt("monolock-tfo", "with TCP Fast Open"), {
		ID:        "target-tfo-latency",
		Claim:     "Target: with TCP Fast Open a claim on a new connection is at least 20% faster than without.",
		Statement: "Uncontended (latency, w1), monolock-tfo's acquire p50 (a new connection per claim) is at most 0.8 × monolock's.",
		Threshold: "holds when monolock-tfo ≤ 0.8 × monolock for every pairing of repetitions; fails when above for every pairing",
		Scenario:  "latency", Variant: "w1", Subject: "monolock-tfo", Metric: results.LatencyMetrics.AcquireP50.Name,
		Op: results.AtMost, Than: results.ClaimBound{Contender: "monolock", Factor: 0.8},
		Spread: results.SpreadRange, Quote: []results.ClaimQuote{{Contender: "tcp-floor"}},
	}}, variantCostTargets("monolock-tfo")...)
}

// ThroughputTarget is the target that subject's short-lock throughput at
// the most workers reaches 95% of the tcp-floor's: the connection per
// claim is all it costs.
func ThroughputTarget(subject string) results.ClaimRule {
	return results.ClaimRule{
		ID:        "target-throughput-" + subject,
		Claim:     "Target: short locks run at the speed of a bare connection per claim.",
		Statement: "Short locks on distinct keys at the most workers (throughput, distinct-w*), " + subject + "'s cycles per second are at least 0.95 × the tcp-floor's.",
		Threshold: "holds when " + subject + " ≥ 0.95 × tcp-floor for every pairing of repetitions; fails when below for every pairing",
		Scenario:  "throughput", Variant: "distinct-w*", Pick: results.PickLargest, Subject: subject, Metric: results.ThroughputMetrics.CyclesPerSec.Name,
		Op: results.AtLeast, Than: results.ClaimBound{Contender: "tcp-floor", Factor: 0.95},
		Spread: results.SpreadRange,
	}
}

// variantCostTargets are the targets of a client variant of monolock: the
// throughput target, and that it costs the server no more than 10% more
// CPU per 1,000 locks than the plain client.
func variantCostTargets(subject string) []results.ClaimRule {
	return []results.ClaimRule{ThroughputTarget(subject), {
		ID:        "target-server-cpu-" + subject,
		Claim:     "Target: the client variant does not make the server work harder per lock, within 10%.",
		Statement: "Short locks on distinct keys at the most workers (throughput, distinct-w*), the server's CPU per 1,000 locks with " + subject + " is at most 1.1 × with monolock.",
		Threshold: "holds when " + subject + " ≤ 1.1 × monolock for every pairing of repetitions; fails when above for every pairing",
		Scenario:  "throughput", Variant: "distinct-w*", Pick: results.PickLargest, Subject: subject, Metric: results.ThroughputMetrics.ServerCPUMsPer1k.Name,
		Op: results.AtMost, Than: results.ClaimBound{Contender: "monolock", Factor: 1.1},
		Spread: results.SpreadRange,
	}}
}
