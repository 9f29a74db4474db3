package monolock

import (
	"io"
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

// keeper runs one session's heartbeats and its pessimistic deadline. After
// the ACQUIRE it is the connection's only writer. Its inputs are injected
// so that the schedule is testable without a connection.
type keeper struct {
	lease   time.Duration
	w       io.Writer        // the connection: HEARTBEATs are written here
	conf    *confirmation    // told the send time of each answered frame; may be nil
	answers <-chan time.Time // receive time of each answer to a frame we sent
	quit    <-chan struct{}  // closed when the session ends for another reason
	sched   schedule         // interval state
}

var heartbeatFrame = protocol.AppendHeartbeat(nil)

// patience is how long the client waits for a confirming frame before it
// gives the session up: 0.8 × lease.
func patience(lease time.Duration) time.Duration { return lease * 4 / 5 }

// run starts with the ACQUIRE written at sentAt, answered at answeredAt
// (zero: its answer is still in flight). It returns nil when quit is
// closed, or the reason the session is lost.
//
// The deadline counts from the send time of the last answered frame, not
// from the answer's arrival: the server heard that frame no earlier than
// it was sent, so the server's silence window cannot end before ours.
func (k *keeper) run(sentAt, answeredAt time.Time) error {
	patience := patience(k.lease)
	inFlight, due := answeredAt.IsZero(), false
	if !inFlight {
		k.sched.observe(answeredAt.Sub(sentAt))
	}
	deadline := time.NewTimer(time.Until(sentAt.Add(patience)))
	defer deadline.Stop()
	next := time.NewTimer(time.Until(sentAt.Add(k.sched.interval())))
	defer next.Stop()
	send := func() error {
		if _, err := k.w.Write(heartbeatFrame); err != nil {
			return &connError{what: "sending heartbeat", err: err}
		}
		sentAt, inFlight, due = time.Now(), true, false
		next.Reset(k.sched.interval())
		return nil
	}
	for {
		select {
		case <-k.quit:
			return nil
		case <-deadline.C:
			return ErrHeartbeatTimeout
		case at := <-k.answers:
			if !inFlight {
				continue // an extra ACQUIRED: it confirms nothing new
			}
			inFlight = false
			if k.conf != nil {
				k.conf.confirm(sentAt)
			}
			k.sched.observe(at.Sub(sentAt))
			deadline.Reset(time.Until(sentAt.Add(patience)))
			if due {
				if err := send(); err != nil {
					return err
				}
				continue
			}
			// The new sample may shorten the interval of the pending send.
			next.Reset(time.Until(sentAt.Add(k.sched.interval())))
		case <-next.C:
			if inFlight {
				due = true // one in flight: send when the answer arrives
				continue
			}
			if err := send(); err != nil {
				return err
			}
		}
	}
}
