package check

import "testing"

// Hand-made histories with planted bugs. Each round of a contention loop
// takes 10 ms: the holder is granted at +2, writes the fenced register
// at +3 and the unfenced one at +5 (with its token), releases at +7 and
// asks again at +9, so its next grant comes three rounds later and every
// waiter's acquire runs across the two grants before its own, as in a
// real run.

// roundAt is the start of round i.
func roundAt(i int) Mono { return Mono(10 * i) }

// askedAt is when the holder of round i invoked its acquire.
func askedAt(i int) Mono {
	if i < 3 {
		return 1
	}
	return roundAt(i-3) + 9
}

// holderOf is the client of round i.
func holderOf(i int) string { return []string{"c1", "c2", "c3"}[i%3] }

// tokenRestart: a server restart between rounds restartAt-1 and
// restartAt starts the token sequence over: round i is granted token
// i+1 before it and i-restartAt+1 after. The fenced store, which has seen
// token restartAt, refuses the writes of the new holders until their
// tokens reach it again. Nobody held the lock twice and no write was
// stale: the grants after the restart are the newest, whatever their
// tokens say.
func tokenRestart(t *testing.T, rounds, restartAt int) *History {
	t.Helper()
	b := newBuilder()
	mark := uint64(0)
	for i := range rounds {
		p, r := holderOf(i), roundAt(i)
		token := uint64(i + 1)
		if i >= restartAt {
			token = uint64(i - restartAt + 1)
		}
		b.acquire(p, askedAt(i), r+2, token)
		b.write(p, StoreFenced, "f"+string(rune('a'+i)), token, r+3, r+4, OK, token >= mark)
		mark = max(mark, token)
		b.write(p, StoreUnfenced, "u"+string(rune('a'+i)), token, r+5, r+6, OK, true)
		b.release(p, r+7, r+8)
	}
	b.fault(1, "server-kill", "lock", roundAt(restartAt)-1, roundAt(restartAt)+1)
	// The last holders' next acquires are still waiting at the end.
	for i := rounds; i < rounds+3; i++ {
		b.acquire(holderOf(i), askedAt(i), 0, 0)
	}
	return b.history(t)
}

// doubleGrant: every tenth acquire is granted while the previous holder
// still holds the lock, with the holder's own token (the server forgot to
// advance it). The previous holder writes once more, under its old grant,
// after that double grant (at +3.. of the round, before its release at
// +6); both stores accept it, the fenced one too since the token is the
// same.
func doubleGrant(t *testing.T, rounds int) *History {
	t.Helper()
	b := newBuilder()
	token := uint64(0)
	released := map[int]Mono{} // round → when its holder asked again
	for i := range rounds {
		p, r := holderOf(i), roundAt(i)
		if (i+1)%10 != 0 {
			token++
		}
		asked := askedAt(i)
		if at, ok := released[i-3]; ok {
			asked = at
		}
		b.acquire(p, asked, r+2, token)
		b.write(p, StoreFenced, "f"+string(rune('a'+i)), token, r+3, r+4, OK, true)
		b.write(p, StoreUnfenced, "u"+string(rune('a'+i)), token, r+5, r+6, OK, true)
		if (i+2)%10 == 0 { // the holder of the round before a double grant
			b.write(p, StoreFenced, "F"+string(rune('a'+i)), token, r+13, r+14, OK, true)
			b.write(p, StoreUnfenced, "U"+string(rune('a'+i)), token, r+14, r+15, OK, true)
			b.release(p, r+16, r+17)
			released[i] = r + 18
			continue
		}
		b.release(p, r+7, r+8)
	}
	return b.history(t)
}

// TestTokenRestart: the checkers order grants by real time, so the
// holders after a restart that started the tokens over are not blamed
// for stale writes.
func TestTokenRestart(t *testing.T) {
	h := tokenRestart(t, 12, 5)
	if x := CheckExclusion(h); x.Count != 0 {
		t.Errorf("%d overlapping holds, want 0: %+v", x.Count, x.Overlaps)
	}
	u := CheckStaleWrites(h, StoreUnfenced)
	if u.Count != 0 || u.Writes != 12 {
		t.Errorf("unfenced: %d stale writes of %d, want 0 of 12 (first %+v)", u.Count, u.Writes, u.First)
	}
	f := CheckStaleWrites(h, StoreFenced)
	if f.Count != 0 || f.Rejected != 0 {
		t.Errorf("fenced: %d stale writes accepted, %d rejected; want 0 and 0: the refused writes were the holder's", f.Count, f.Rejected)
	}
	// Tokens 1 to 4 after the restart are below the fenced store's mark 5.
	if f.RefusedHolder.Count != 4 || u.RefusedHolder.Count != 0 {
		t.Errorf("holder's writes refused: fenced %d, unfenced %d; want 4, 0", f.RefusedHolder.Count, u.RefusedHolder.Count)
	}
	if f.RefusedHolder.First == nil || f.RefusedHolder.First.At != 53*ms || f.RefusedHolder.ByFault[1] == 0 {
		t.Errorf("first refused holder write %+v (by fault %v), want c3's at 53 ms blamed on the restart", f.RefusedHolder.First, f.RefusedHolder.ByFault)
	}
	// Tokens 1 to 5 after the restart are not above a released token.
	o := CheckTokenOrder(h)
	if o.Count != 5 || o.Grants != 12 || o.Valid != Invalid {
		t.Errorf("token order: %d of %d grants out of order (%s), want 5 of 12", o.Count, o.Grants, o.Valid)
	}
	if o.First == nil || o.First.At != 52*ms || o.ByFault[1] != 5 {
		t.Errorf("token order: first %+v, by fault %v; want the grant at 52 ms first, all 5 blamed on the restart", o.First, o.ByFault)
	}
	if v := Check(h, Options{}); v.Valid != Invalid || v.TokenOrder.Count != 5 {
		t.Errorf("verdict %s with %d grants out of token order, want invalid with 5", v.Valid, v.TokenOrder.Count)
	}
}

// TestDoubleGrant: every tenth acquire granted while the lock is held is
// an overlap, and the earlier holder's writes after it are stale in both
// stores (the token did not advance, so the fenced store took them).
func TestDoubleGrant(t *testing.T) {
	h := doubleGrant(t, 30)
	x := CheckExclusion(h)
	if x.Count != 3 || x.Running != 3 {
		t.Errorf("%d overlapping holds (%d running), want 3 (3): %+v", x.Count, x.Running, x.Overlaps)
	}
	for _, store := range []string{StoreFenced, StoreUnfenced} {
		s := CheckStaleWrites(h, store)
		if s.Count != 3 || s.Valid != Invalid || s.RefusedHolder.Count != 0 {
			t.Errorf("%s: %d stale writes accepted (%s), %d holder's writes refused; want 3, 0: first %+v", store, s.Count, s.Valid, s.RefusedHolder.Count, s.First)
		}
	}
	// The token stood still while the lock was held twice: no release
	// came before the double grant was asked for.
	if o := CheckTokenOrder(h); o.Count != 0 || o.Grants != 30 {
		t.Errorf("token order: %d of %d grants out of order, want 0 of 30", o.Count, o.Grants)
	}
}

// TestWritesAfterLost: a write that leaves after the writer's own lost
// notice is counted, stale or not (here nobody else was granted).
func TestWritesAfterLost(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 1, 2, 1)
	b.write("c1", StoreUnfenced, "a", 1, 3, 4, OK, true)
	b.lost("c1", 5)
	b.write("c1", StoreUnfenced, "b", 1, 6, 7, OK, true)   // after the notice
	b.incWrite("c1", StoreFenced, 1, 4, 8, 9, OK, 0, true) // read before it, written after
	b.release("c1", 10, 11)
	h := b.history(t)
	for store, want := range map[string]int{StoreUnfenced: 1, StoreFenced: 1} {
		if s := CheckStaleWrites(h, store); s.AfterLost != want || s.Count != 0 || s.RefusedHolder.Count != 0 {
			t.Errorf("%s: %d writes after the lost notice, %d stale, %d refused; want %d, 0, 0", store, s.AfterLost, s.Count, s.RefusedHolder.Count, want)
		}
	}
}

// TestRefusedHolderNeedsToken: a fenced store refusing a write that
// carried no token (a contender without tokens) locks nobody out.
func TestRefusedHolderNeedsToken(t *testing.T) {
	b := newBuilder()
	b.acquire("c1", 1, 2, 0)
	b.write("c1", StoreFenced, "a", 0, 3, 4, OK, false)
	b.release("c1", 5, 6)
	if s := CheckStaleWrites(b.history(t), StoreFenced); s.RefusedHolder.Count != 0 || s.Count != 0 {
		t.Errorf("%d holder's writes refused, %d stale; want 0, 0", s.RefusedHolder.Count, s.Count)
	}
}
