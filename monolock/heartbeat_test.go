package monolock

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestScheduleInterval(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		lease   time.Duration
		samples []time.Duration
		want    time.Duration
	}{
		{"no sample: lease/4", 2 * time.Second, nil, 500 * ms},
		// The round trip is taken from 0.8 × lease, not from lease/4: at a
		// 2s lease the interval stays 500ms up to an RTT of 550ms.
		{"rtt 50ms: lease/4", 2 * time.Second, []time.Duration{50 * ms}, 500 * ms},
		{"rtt 550ms: still lease/4", 2 * time.Second, []time.Duration{550 * ms}, 500 * ms},
		{"rtt 600ms: 0.8×lease − 2×rtt", 2 * time.Second, []time.Duration{600 * ms}, 400 * ms},
		{"ewma 0.2: 600 then 700 → 620", 2 * time.Second, []time.Duration{600 * ms, 700 * ms}, 360 * ms},
		{"ewma 0.2: 700, 0 → 560", 2 * time.Second, []time.Duration{700 * ms, 0}, 480 * ms},
		{"large rtt: floor 100ms", 2 * time.Second, []time.Duration{800 * ms}, 100 * ms},
		{"short lease: base under the floor wins", 200 * ms, nil, 50 * ms},
		{"short lease with rtt: still base", 200 * ms, []time.Duration{10 * ms}, 50 * ms},
		// The docs' "not more often than every 100ms" is silent on leases
		// under 400ms; the choice (package doc): the floor holds from 400ms
		// on, below it lease/4 wins.
		{"lease 400ms with rtt: the floor", 400 * ms, []time.Duration{10 * ms}, 100 * ms},
		{"lease 396ms with rtt: lease/4 under the floor", 396 * ms, []time.Duration{10 * ms}, 99 * ms},
		{"negative sample counts as 0", 2 * time.Second, []time.Duration{-5 * ms}, 500 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(tt.lease)
			for _, rtt := range tt.samples {
				s.observe(rtt)
			}
			if got := s.interval(); got != tt.want {
				t.Fatalf("interval = %v, want %v (ewma %v)", got, tt.want, s.rtt)
			}
		})
	}
}

// fakeServer answers a session's frames after rtt each: the ACQUIRE,
// sent when it is made, then up to answerBeats heartbeats (negative: all).
// It holds the session in a keeper of its own and records the heartbeats'
// send times (relative to the bubble's start), the largest number of
// unanswered frames, and why the keeper gave the session up.
type fakeServer struct {
	start       time.Time
	rtt         time.Duration
	answerBeats int
	frames      chan struct{} // one per heartbeat sent
	sends       []time.Duration
	maxInFlight int
	lost        chan error // the session's end, once
	k           keeper
	b           beat
}

func newFakeServer(rtt time.Duration, answerBeats int) *fakeServer {
	f := &fakeServer{
		start:       time.Now(),
		rtt:         rtt,
		answerBeats: answerBeats,
		frames:      make(chan struct{}, 16),
		lost:        make(chan error, 1),
	}
	f.b = beat{
		w: writerFunc(func(p []byte) (int, error) {
			f.sends = append(f.sends, time.Since(f.start))
			f.frames <- struct{}{}
			return len(p), nil
		}),
		lost: func(err error) { f.lost <- err },
		slot: -1,
	}
	return f
}

// hold answers the ACQUIRE (sent at the start) after rtt and hands the
// session to the keeper, as a Lock's reader does.
func (f *fakeServer) hold(lease time.Duration) {
	time.Sleep(f.rtt)
	f.k.add(&f.b, lease, f.start, time.Now())
}

// serve runs in the bubble: one heartbeat at a time, answered after rtt.
func (f *fakeServer) serve(quit <-chan struct{}) {
	answered := 0
	for {
		select {
		case <-quit:
			return
		case <-f.frames:
		}
		f.maxInFlight = max(f.maxInFlight, 1+len(f.frames))
		if f.answerBeats >= 0 && answered >= f.answerBeats {
			continue
		}
		select {
		case <-time.After(f.rtt):
		case <-quit:
			return
		}
		answered++
		f.k.answered(&f.b, time.Now())
	}
}

// run holds the session for d, then lets it go; it returns why the keeper
// gave it up (nil: it did not).
func (f *fakeServer) run(lease, d time.Duration) error {
	quit := make(chan struct{})
	served := make(chan struct{})
	go func() { f.serve(quit); close(served) }()
	f.hold(lease)
	var err error
	select {
	case <-time.After(d - f.rtt):
	case err = <-f.lost:
	}
	close(quit)
	<-served
	f.k.remove(&f.b)
	return err
}

func TestKeeperSchedule(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name      string
		lease     time.Duration
		rtt       time.Duration
		runFor    time.Duration
		wantSends []time.Duration
	}{
		// Instant answers: every lease/4, measured from the ACQUIRE.
		{"interval lease/4", 2 * time.Second, 0, 2100 * ms, []time.Duration{500 * ms, 1000 * ms, 1500 * ms, 2000 * ms}},
		// An RTT the 0.8 × lease give-up has room for changes nothing.
		{"rtt 50ms: still lease/4", 2 * time.Second, 50 * ms, 1300 * ms, []time.Duration{500 * ms, 1000 * ms}},
		// The ACQUIRE's answer is the first sample: 1600 − 2×600 = 400;
		// then each heartbeat waits for the answer to the one before.
		{"rtt 600ms: shortened, one in flight", 2 * time.Second, 600 * ms, 1900 * ms, []time.Duration{600 * ms, 1200 * ms, 1800 * ms}},
		// RTT 700ms > interval: the next heartbeat waits for the answer
		// and goes out the moment it arrives.
		{"one in flight", 2 * time.Second, 700 * ms, 2200 * ms, []time.Duration{700 * ms, 1400 * ms, 2100 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeServer(tt.rtt, -1)
				if err := f.run(tt.lease, tt.runFor); err != nil {
					t.Fatalf("session lost: %v", err)
				}
				if !equalDurations(f.sends, tt.wantSends) {
					t.Fatalf("heartbeats sent at %v, want %v", f.sends, tt.wantSends)
				}
				if f.maxInFlight > 1 {
					t.Fatalf("%d frames in flight at once, want at most 1", f.maxInFlight)
				}
			})
		})
	}
}

// TestKeeperRateDoesNotRiseWithRTT holds a session at a 2s lease for a
// minute at each steady round trip and counts its heartbeats: the count
// never rises as the round trip grows (no feedback from a loaded machine),
// never exceeds one per lease/4, and the session is never given up, up to
// an RTT of 0.375 × lease (beyond 0.4 × lease no schedule with one
// heartbeat in flight can confirm within 0.8 × lease). Under the former
// interval, lease/4 − 2×RTT, the count rose from 120 (RTT 0) to 150 at
// 50ms and 300 at 200ms.
func TestKeeperRateDoesNotRiseWithRTT(t *testing.T) {
	// A millisecond past the minute, so that the end falls on no send.
	const lease, runFor = 2 * time.Second, time.Minute + time.Millisecond
	ms := time.Millisecond
	rtts := []time.Duration{0, ms / 10, 1 * ms, 10 * ms, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 550 * ms, 600 * ms, 700 * ms, 750 * ms}
	maxSends := int(time.Minute / (lease / 4))
	prev := maxSends
	for _, rtt := range rtts {
		var sends, inFlight int
		synctest.Test(t, func(t *testing.T) {
			f := newFakeServer(rtt, -1)
			if err := f.run(lease, runFor); err != nil {
				t.Fatalf("rtt %v: session lost: %v", rtt, err)
			}
			sends, inFlight = len(f.sends), f.maxInFlight
		})
		t.Logf("rtt %v: %d heartbeats in %v", rtt, sends, runFor)
		if sends > prev {
			t.Errorf("rtt %v: %d heartbeats, more than %d at a shorter RTT", rtt, sends, prev)
		}
		if sends > maxSends {
			t.Errorf("rtt %v: %d heartbeats, more than one per lease/4 (%d)", rtt, sends, maxSends)
		}
		if inFlight > 1 {
			t.Errorf("rtt %v: %d frames in flight at once, want at most 1", rtt, inFlight)
		}
		prev = sends
	}
}

func TestKeeperDeadline(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name        string
		rtt         time.Duration
		answerBeats int
		want        time.Duration
	}{
		// The ACQUIRE (t=0) is answered, the first heartbeat (500ms) is
		// not: 0.8 × 2s after the ACQUIRE was sent.
		{"first heartbeat unanswered", 0, 0, 1600 * ms},
		// ACQUIRE (t=0) and the heartbeat sent at 500ms are answered;
		// the deadline counts from that send, not from its answer at 550.
		{"silence after two answers", 50 * ms, 1, 2100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeServer(tt.rtt, tt.answerBeats)
				err := f.run(2*time.Second, time.Hour)
				if !errors.Is(err, ErrHeartbeatTimeout) {
					t.Fatalf("lost with %v, want ErrHeartbeatTimeout", err)
				}
				if got := time.Since(f.start); got != tt.want {
					t.Fatalf("gave up after %v, want %v", got, tt.want)
				}
			})
		})
	}
}

func TestKeeperSendError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeServer(0, -1)
		broken := errors.New("broken pipe")
		f.b.w = writerFunc(func([]byte) (int, error) { return 0, broken })
		err := f.run(time.Second, time.Hour)
		if !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, broken) {
			t.Fatalf("lost with %v, want ErrConnectionClosed wrapping the write error", err)
		}
	})
}

// TestKeeperServesManySessions holds sessions with different leases and
// round trips in one keeper, one of them unanswered: each keeps its own
// schedule, the unanswered one is given up at its own deadline, and the
// keeper's goroutine exits once the last session is let go.
func TestKeeperServesManySessions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ms := time.Millisecond
		var k keeper
		type session struct {
			lease, rtt time.Duration
			silent     bool
			sends      []time.Duration
			lost       error
		}
		sessions := []*session{
			{lease: 2 * time.Second, rtt: 10 * ms},
			{lease: 400 * ms, rtt: 0},
			{lease: time.Second, rtt: 0, silent: true},
			{lease: 4 * time.Second, rtt: 100 * ms},
		}
		start := time.Now()
		beats := make([]*beat, len(sessions))
		for i, s := range sessions {
			b := &beat{slot: -1}
			beats[i] = b
			b.lost = func(err error) { s.lost = err }
			b.w = writerFunc(func(p []byte) (int, error) {
				s.sends = append(s.sends, time.Since(start))
				if !s.silent {
					time.AfterFunc(s.rtt, func() { k.answered(b, time.Now()) })
				}
				return len(p), nil
			})
			k.add(b, s.lease, start, start)
		}
		time.Sleep(2150 * ms)
		for _, b := range beats {
			k.remove(b)
		}
		synctest.Wait() // the keeper's goroutine has exited: the bubble would not end otherwise
		want := [][]time.Duration{
			{500 * ms, 1000 * ms, 1500 * ms, 2000 * ms},
			{100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms, 700 * ms, 800 * ms, 900 * ms, 1000 * ms, 1100 * ms, 1200 * ms, 1300 * ms, 1400 * ms, 1500 * ms, 1600 * ms, 1700 * ms, 1800 * ms, 1900 * ms, 2000 * ms, 2100 * ms},
			{250 * ms},
			{1000 * ms, 2000 * ms},
		}
		for i, s := range sessions {
			if !equalDurations(s.sends, want[i]) {
				t.Errorf("session %d (lease %v): heartbeats at %v, want %v", i, s.lease, s.sends, want[i])
			}
			if wantLost := s.silent; (s.lost != nil) != wantLost || (wantLost && !errors.Is(s.lost, ErrHeartbeatTimeout)) {
				t.Errorf("session %d: lost with %v, want lost: %v", i, s.lost, wantLost)
			}
		}
	})
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// writerFunc is an io.Writer made of a function.
type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
