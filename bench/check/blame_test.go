package check

import "testing"

// TestClassifyOverlaps classifies hand-made running overlaps of c1 (the
// first holder, granted at 10 ms, lease 100 ms) and c2 (granted at 60
// ms) by the server's own record.
func TestClassifyOverlaps(t *testing.T) {
	overlap := func(b *builder, tokens bool) {
		var first, second uint64
		if tokens {
			first, second = 7, 9
		}
		b.acquire("c1", 5, 10, first)
		b.acquire("c2", 20, 60, second)
		b.lost("c1", 90) // c1 ran on, and learned 30 ms after c2's grant
		b.release("c2", 120, 121)
	}
	tests := []struct {
		name   string
		tokens bool // the grants carry tokens 7 and 9
		record func(b *builder)
		want   Blame
	}{
		{"server granted before its own end of the first hold", false, func(b *builder) {
			b.server("redis", Watching, 1, "", 0, 0, "")
			b.server("redis", ServerGrant, 9, "lock", 0, 100, "")
			b.server("redis", ServerGrant, 59, "lock", 0, 100, "")
			b.server("redis", ServerEnd, 95, "lock", 0, 0, "expired")
		}, BlameServer},
		{"server expired the first lease before its TTL ran out", false, func(b *builder) {
			b.server("redis", Watching, 1, "", 0, 0, "")
			b.server("redis", ServerGrant, 9, "lock", 0, 100, "")
			b.server("redis", ServerEnd, 40, "lock", 0, 0, "expired") // due at 109
			b.server("redis", ServerGrant, 59, "lock", 0, 100, "")
		}, BlameServer},
		{"server expired on time, the client learned after the next grant", false, func(b *builder) {
			b.server("redis", Watching, 1, "", 0, 0, "")
			b.server("redis", ServerGrant, 9, "lock", 0, 30, "")
			b.server("redis", ServerEnd, 40, "lock", 0, 0, "expired") // due at 39
			b.server("redis", ServerGrant, 59, "lock", 0, 100, "")
		}, BlameClient},
		{"etcd record matched by token: the end precedes the grant", true, func(b *builder) {
			b.server("etcd", Watching, 1, "", 0, 0, "")
			b.server("etcd", ServerGrant, 9, "/lock/a", 7, 0, "")
			b.server("etcd", ServerEnd, 50, "/lock/a", 7, 0, "")
			b.server("etcd", ServerGrant, 50, "/lock/b", 9, 0, "")
		}, BlameClient},
		{"the watch broke between the grants", false, func(b *builder) {
			b.server("redis", Watching, 1, "", 0, 0, "")
			b.server("redis", ServerGrant, 9, "lock", 0, 100, "")
			b.server("redis", Unwatched, 30, "", 0, 0, "")
			b.server("redis", Watching, 55, "", 0, 0, "")
			b.server("redis", ServerGrant, 59, "lock", 0, 100, "")
		}, BlameUnclassified},
		{"no server record", false, func(*builder) {}, BlameUnclassified},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			overlap(b, tc.tokens)
			tc.record(b)
			h := b.history(t)
			x := CheckExclusion(h)
			if x.Running != 1 {
				t.Fatalf("%d running overlaps, want 1", x.Running)
			}
			got := ClassifyOverlaps(h, x)
			if len(got.Overlaps) != 1 || got.Overlaps[0].Blame != tc.want {
				t.Fatalf("classified %+v, want %q", got.Overlaps, tc.want)
			}
			t.Log(got.Overlaps[0].Why)
			n := map[Blame]int{BlameServer: got.ServerEarly, BlameClient: got.ClientLate, BlameBoth: got.Both, BlameUnclassified: got.Unclassified}
			if n[tc.want] != 1 || got.ServerEarly+got.ClientLate+got.Both+got.Unclassified != 1 {
				t.Errorf("counts %+v, want one %q", got, tc.want)
			}
			if v := Check(h, Options{}); v.Blame.Overlaps[0].Blame != tc.want {
				t.Errorf("Check's blame %q, want %q", v.Blame.Overlaps[0].Blame, tc.want)
			}
		})
	}
}

// TestClassifyBoth: the server expired the first lease early and the
// first holder still believed past the time it was due.
func TestClassifyBoth(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 5, 10, 0)
	b.acquire("c2", 20, 60, 0)
	b.lost("c1", 150) // due at 109: c1 believed 41 ms past it
	b.release("c2", 160, 161)
	b.server("redis", Watching, 1, "", 0, 0, "")
	b.server("redis", ServerGrant, 9, "lock", 0, 100, "")
	b.server("redis", ServerEnd, 40, "lock", 0, 0, "expired")
	b.server("redis", ServerGrant, 59, "lock", 0, 100, "")
	got := ClassifyOverlaps(b.history(t), CheckExclusion(b.history(t)))
	if got.Both != 1 {
		t.Fatalf("%+v, want one overlap of both", got)
	}
}

// TestServerEventFormat: server events round-trip through a history and
// break the format without their key.
func TestServerEventFormat(t *testing.T) {
	good := Event{T: 1, Process: "redis", Type: Server, F: ServerGrant, Key: "k", TTLMS: Ptr[int64](2000)}
	if err := good.validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Event{
		{T: 1, Process: "redis", Type: Server, F: ServerGrant},
		{T: 1, Process: "redis", Type: Server, F: Acquire, Key: "k"},
		{T: 1, Process: "c1", Type: Notice, F: Lost, Key: "k"},
	} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// TestClassifyMatchesNearestGrant: c2 asked before c1 was granted, so
// c1's server grant lies in c2's wait; c2's own grant, seen 1 ms after
// its reply, is the one nearest its completion (a chaos run on Redis
// showed the watcher's notification 0.1 ms after the client's reply).
func TestClassifyMatchesNearestGrant(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 5, 10, 0)
	b.acquire("c2", 2, 60, 0)
	b.lost("c1", 90)
	b.release("c2", 120, 121)
	b.server("redis", Watching, 1, "", 0, 0, "")
	b.server("redis", ServerGrant, 9, "lock", 0, 30, "")
	b.server("redis", ServerEnd, 40, "lock", 0, 0, "expired")
	b.server("redis", ServerGrant, 61, "lock", 0, 100, "")
	h := b.history(t)
	got := ClassifyOverlaps(h, CheckExclusion(h))
	if len(got.Overlaps) != 1 || got.Overlaps[0].Blame != BlameClient {
		t.Fatalf("classified %+v, want %q", got.Overlaps, BlameClient)
	}
}
