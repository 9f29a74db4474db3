package monolock

import (
	"container/heap"
	"io"
	"sync"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

// Heartbeat schedule constants (see the package documentation).
const (
	heartbeatFloor = 100 * time.Millisecond // shortest interval, unless lease/4 is shorter
	rttAlpha       = 0.2                    // weight of a new RTT sample in the EWMA
)

// schedule derives the heartbeat interval from the lease and the measured
// round-trip times. It is pure data: the caller supplies every sample.
type schedule struct {
	base     time.Duration // lease/4: the longest interval
	patience time.Duration // 0.8 × lease: when the client gives up
	rtt      time.Duration // EWMA of the samples; 0 before the first
	seen     bool
}

func newSchedule(lease time.Duration) schedule {
	return schedule{base: lease / 4, patience: patience(lease)}
}

// observe folds one round-trip sample into the EWMA. The first sample
// initialises it, so one slow handshake is not averaged with zero.
func (s *schedule) observe(rtt time.Duration) {
	if rtt < 0 {
		rtt = 0
	}
	if !s.seen {
		s.rtt, s.seen = rtt, true
		return
	}
	s.rtt = time.Duration(rttAlpha*float64(rtt) + (1-rttAlpha)*float64(s.rtt))
}

// interval is patience − 2 × EWMA(RTT), at least 100ms and at most base.
// A heartbeat sent one interval after the last confirmed send is answered
// about one RTT later, so this leaves one more RTT of margin before the
// client would give up. The round trip is subtracted from the patience,
// not from base: subtracting it from base made every client send more
// often as the machine got loaded and round trips grew, which loaded it
// more. Now the interval is base until the RTT reaches 0.275 × lease, and
// beyond that it shortens only as far as the give-up at 0.8 × lease needs;
// with one heartbeat in flight the pace is then the RTT itself, so the
// rate never exceeds one per base at a steady RTT. For a lease under
// 400ms base itself is below the floor; base wins, because a longer
// interval could not keep such a lease alive.
func (s *schedule) interval() time.Duration {
	d := s.patience - 2*s.rtt
	d = max(d, heartbeatFloor)
	return min(d, s.base)
}

// keeper sends the heartbeats of all of a Client's sessions and enforces
// their pessimistic deadlines, from one goroutine and one timer for all of
// them (instead of a goroutine and two timers per session). Sessions are
// kept in a heap by their next event: the next heartbeat, or, while one is
// in flight, the deadline. Readers report answers directly (answered),
// under the keeper's mutex, which is also the sessions' write mutex: a
// heartbeat is written by the keeper's goroutine, or by the reader when
// its answer arrives after the next heartbeat was due. The goroutine runs
// only while the keeper has sessions: the remove of the last one retires it
// and returns once it has exited, so no goroutine outlives the Client's
// Locks.
//
// A heartbeat write cannot stall the others: with one heartbeat in flight
// per session, a connection never holds more than one unanswered frame.
type keeper struct {
	mu     sync.Mutex
	beats  beatHeap
	wake   chan struct{} // the running goroutine's: asks it to look again; nil: none runs
	timer  *time.Timer   // the running goroutine's, for the earliest event
	exited chan struct{} // closed when the latest goroutine has returned
}

// beat is one session's heartbeat state, guarded by the keeper's mutex.
// Its inputs are injected so that the schedule is testable without a
// connection.
type beat struct {
	w     io.Writer     // the connection: HEARTBEATs are written here
	conf  *confirmation // told the send time of each answered frame
	lost  func(error)   // ends the session, at most once
	sched schedule

	patience  time.Duration // 0.8 × lease
	sentAt    time.Time     // the last frame sent
	confirmed time.Time     // the send time of the last answered frame
	inFlight  bool
	gone      bool // ended: no more sends; left for remove
	slot      int  // index in the keeper's heap; -1 when not in it
}

var heartbeatFrame = protocol.AppendHeartbeat(nil)

// patience is how long the client waits for a confirming frame before it
// gives the session up: 0.8 × lease.
func patience(lease time.Duration) time.Duration { return lease * 4 / 5 }

// next is when the keeper must next act for b: the next heartbeat, or
// while one is in flight, the deadline. The deadline counts from the send
// time of the last answered frame, not from the answer's arrival: the
// server heard that frame no earlier than it was sent, so the server's
// silence window cannot end before ours.
func (b *beat) next() time.Time {
	if b.inFlight {
		return b.confirmed.Add(b.patience)
	}
	return b.sentAt.Add(b.sched.interval())
}

// add starts b's heartbeats: its ACQUIRE was sent at sentAt and answered
// at answeredAt.
func (k *keeper) add(b *beat, lease time.Duration, sentAt, answeredAt time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.gone { // ended before its reader handed it over
		return
	}
	b.sched = newSchedule(lease)
	b.sched.observe(answeredAt.Sub(sentAt))
	b.patience = patience(lease)
	b.sentAt, b.confirmed = sentAt, sentAt
	if b.conf != nil {
		b.conf.confirm(sentAt)
	}
	heap.Push(&k.beats, b)
	if k.wake == nil {
		// Made here, by the session's reader, so that inside a
		// testing/synctest bubble they belong to the session's bubble.
		k.wake, k.timer, k.exited = make(chan struct{}, 1), time.NewTimer(time.Until(b.next())), make(chan struct{})
		go k.run(k.wake, k.timer, k.exited)
		return
	}
	k.rearmLocked(b)
}

// remove stops b's heartbeats; when it returns the keeper no longer
// touches b's connection, and if b was the last session, the keeper's
// goroutine has exited.
func (k *keeper) remove(b *beat) {
	k.mu.Lock()
	b.gone = true
	if b.slot >= 0 {
		heap.Remove(&k.beats, b.slot)
	}
	var exited chan struct{}
	if len(k.beats) == 0 {
		k.retireLocked()
		exited = k.exited
	}
	k.mu.Unlock()
	if exited != nil {
		<-exited
	}
}

// retireLocked tells the running goroutine, if any, to return; a later add
// starts another.
func (k *keeper) retireLocked() {
	if k.wake != nil {
		select {
		case k.wake <- struct{}{}:
		default:
		}
	}
	k.wake, k.timer = nil, nil
}

// answered records that the frame b sent last was answered at at (the
// reader's receive time).
func (k *keeper) answered(b *beat, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.gone || !b.inFlight {
		return // an extra ACQUIRED: it confirms nothing new
	}
	b.inFlight = false
	b.confirmed = b.sentAt
	if b.conf != nil {
		b.conf.confirm(b.sentAt)
	}
	b.sched.observe(at.Sub(b.sentAt))
	if !time.Now().Before(b.next()) { // due while in flight: send now
		k.sendLocked(b)
	}
	if !b.gone {
		heap.Fix(&k.beats, b.slot)
		k.rearmLocked(b)
	}
}

// sendLocked writes b's heartbeat; a failed write loses the session.
func (k *keeper) sendLocked(b *beat) {
	if _, err := b.w.Write(heartbeatFrame); err != nil {
		k.loseLocked(b, &connError{what: "sending heartbeat", err: err})
		return
	}
	b.sentAt, b.inFlight = time.Now(), true
}

// loseLocked ends b's session with err and takes b out.
func (k *keeper) loseLocked(b *beat, err error) {
	b.gone = true
	heap.Remove(&k.beats, b.slot)
	b.lost(err)
}

// rearmLocked moves the timer earlier when b's next event is the earliest.
func (k *keeper) rearmLocked(b *beat) {
	if k.timer != nil && len(k.beats) > 0 && k.beats[0] == b {
		k.timer.Reset(time.Until(b.next()))
	}
}

// run is the keeper's goroutine: it sends every heartbeat that is due and
// gives up every session whose deadline has passed, then sleeps until the
// earliest next event. It returns, closing exited, once no session is left
// or it has been retired (k.wake is no longer its own).
func (k *keeper) run(wake chan struct{}, timer *time.Timer, exited chan struct{}) {
	defer close(exited)
	defer timer.Stop()
	k.mu.Lock()
	defer k.mu.Unlock()
	for k.wake == wake {
		now := time.Now()
		for len(k.beats) > 0 && !now.Before(k.beats[0].next()) {
			b := k.beats[0]
			if b.inFlight {
				k.loseLocked(b, ErrHeartbeatTimeout)
				continue
			}
			k.sendLocked(b)
			if !b.gone {
				heap.Fix(&k.beats, 0)
			}
		}
		if len(k.beats) == 0 {
			k.retireLocked()
			return
		}
		timer.Reset(time.Until(k.beats[0].next()))
		k.mu.Unlock()
		select {
		case <-timer.C:
		case <-wake:
		}
		k.mu.Lock()
	}
}

// beatHeap orders sessions by their next event.
type beatHeap []*beat

func (h beatHeap) Len() int           { return len(h) }
func (h beatHeap) Less(i, j int) bool { return h[i].next().Before(h[j].next()) }
func (h beatHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].slot, h[j].slot = i, j
}
func (h *beatHeap) Push(x any) {
	b := x.(*beat)
	b.slot = len(*h)
	*h = append(*h, b)
}
func (h *beatHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	b.slot = -1
	return b
}
