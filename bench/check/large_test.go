package check

import (
	"fmt"
	"testing"
	"time"
)

// TestCheckLargeHistory checks a history of the size a full chaos step
// makes (5 clients, 75s, a hold every ~100ms: 750 holds, 6,000
// operations) and a stalled writer whose write never completes: valid,
// so decided within porcupine's bound (a timeout would be unknown).
func TestCheckLargeHistory(t *testing.T) {
	b := newBuilder()
	var counter int64
	tm := Mono(1)
	for i := range 750 {
		p := fmt.Sprintf("c%d", i%5+1)
		tok := uint64(i + 1)
		b.acquire(p, tm, tm+1, tok)
		for _, s := range []string{StoreFenced, StoreUnfenced} {
			v := fmt.Sprintf("%s-%d", p, i)
			b.read(p, s, tm+2, tm+3, map[bool]string{true: "", false: fmt.Sprintf("c%d-%d", (i-1)%5+1, i-1)}[i == 0])
			b.write(p, s, v, tok, tm+4, tm+5, OK, true)
			b.inc(p, s, tok, tm+6, tm+7, OK, counter, true)
		}
		counter++
		b.release(p, tm+8, tm+9)
		tm += 10
	}
	// A stalled writer whose write never completes.
	b.write("c9", StoreUnfenced, "late", 0, 5, 0, "", false)
	b.final(StoreFenced, tm, counter)
	b.final(StoreUnfenced, tm, counter)
	h := b.history(t)
	begin := time.Now()
	v := Check(h, Options{})
	took := time.Since(begin)
	t.Logf("%d events, %d operations checked in %v", len(h.Events), v.Operations, took)
	if v.Valid != Valid {
		for _, s := range v.Stores {
			t.Logf("%s: %+v %+v %+v", s.Store, s.Linearizability, s.StaleWrites.Findings, s.LostUpdates)
		}
		t.Fatalf("verdict %s, want valid", v.Valid)
	}
}
