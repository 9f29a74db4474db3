// Package analysis turns one run's results into the decision model the
// report lays out: evidence with the condition it was measured at,
// capabilities judged per lock, rankings, the use cases' picks and the
// claims checked (Claim, with its verdict and the figures it rests on). It
// reads bench/results only and renders nothing: the renderers under
// bench/output lay its model out and never decide.
//
// Comparability is in the types: every Evidence carries its Condition
// (scenario, variant, fault, session count, lease, network profile,
// repetitions), a capability is judged only at the condition its
// declaration measures every lock at, and a ranking compares only
// evidence whose conditions match. Evidence measured elsewhere is
// NotComparable, with the difference in words ("tested at 1,000
// sessions"), never a pass and never ranked.
package analysis
