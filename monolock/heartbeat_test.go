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

// fakeServer answers the keeper's frames after rtt each, until stopAfter
// answers (negative: never stop). It records the send times (relative to
// the bubble's start) and the largest number of unanswered frames.
type fakeServer struct {
	start       time.Time
	rtt         time.Duration
	stopAfter   int
	frames      chan time.Time // send times; the first is the ACQUIRE
	answers     chan time.Time
	sends       []time.Duration
	maxInFlight int
}

func newFakeServer(rtt time.Duration, stopAfter int) *fakeServer {
	return &fakeServer{
		start:     time.Now(),
		rtt:       rtt,
		stopAfter: stopAfter,
		frames:    make(chan time.Time, 16),
		answers:   make(chan time.Time, 2),
	}
}

// keeper returns a keeper wired to the fake server; the ACQUIRE is sent now.
func (f *fakeServer) keeper(lease time.Duration, quit <-chan struct{}) *keeper {
	f.frames <- time.Now()
	return &keeper{
		lease: lease,
		w: writerFunc(func(p []byte) (int, error) {
			f.sends = append(f.sends, time.Since(f.start))
			f.frames <- time.Now()
			return len(p), nil
		}),
		answers: f.answers,
		quit:    quit,
		sched:   newSchedule(lease),
	}
}

// serve runs in the bubble: one frame at a time, answered after rtt.
func (f *fakeServer) serve(quit <-chan struct{}) {
	answered := 0
	for {
		select {
		case <-quit:
			return
		case <-f.frames:
		}
		f.maxInFlight = max(f.maxInFlight, 1+len(f.frames))
		if f.stopAfter >= 0 && answered >= f.stopAfter {
			continue
		}
		select {
		case <-time.After(f.rtt):
		case <-quit:
			return
		}
		answered++
		select {
		case f.answers <- time.Now():
		case <-quit:
			return
		}
	}
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
				quit := make(chan struct{})
				f := newFakeServer(tt.rtt, -1)
				k := f.keeper(tt.lease, quit)
				served := make(chan struct{})
				go func() { f.serve(quit); close(served) }()
				done := make(chan error, 1)
				go func() { done <- k.run(f.start, time.Time{}) }()
				time.Sleep(tt.runFor)
				close(quit)
				<-served
				if err := <-done; err != nil {
					t.Fatalf("run = %v, want nil after quit", err)
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
	const lease, runFor = 2 * time.Second, time.Minute
	ms := time.Millisecond
	rtts := []time.Duration{0, 1 * ms, 10 * ms, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 550 * ms, 600 * ms, 700 * ms, 750 * ms}
	maxSends := int(runFor / (lease / 4))
	prev := maxSends
	for _, rtt := range rtts {
		var sends, inFlight int
		synctest.Test(t, func(t *testing.T) {
			quit := make(chan struct{})
			f := newFakeServer(rtt, -1)
			k := f.keeper(lease, quit)
			served := make(chan struct{})
			go func() { f.serve(quit); close(served) }()
			done := make(chan error, 1)
			go func() { done <- k.run(f.start, time.Time{}) }()
			time.Sleep(runFor)
			close(quit)
			<-served
			if err := <-done; err != nil {
				t.Fatalf("rtt %v: run = %v, want the session kept", rtt, err)
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
		name      string
		rtt       time.Duration
		stopAfter int
		want      time.Duration
	}{
		// The ACQUIRE is never answered: 0.8 × 2s after it was sent.
		{"handshake unanswered", 0, 0, 1600 * ms},
		// ACQUIRE (t=0) and the heartbeat sent at 500ms are answered;
		// the deadline counts from that send, not from its answer at 550.
		{"silence after two answers", 50 * ms, 2, 2100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				quit := make(chan struct{})
				defer close(quit)
				f := newFakeServer(tt.rtt, tt.stopAfter)
				k := f.keeper(2*time.Second, quit)
				go f.serve(quit)
				err := k.run(f.start, time.Time{})
				if !errors.Is(err, ErrHeartbeatTimeout) {
					t.Fatalf("run = %v, want ErrHeartbeatTimeout", err)
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
		quit := make(chan struct{})
		answers := make(chan time.Time, 1)
		answers <- time.Now()
		broken := errors.New("broken pipe")
		k := &keeper{lease: time.Second, w: writerFunc(func([]byte) (int, error) { return 0, broken }), answers: answers, quit: quit, sched: newSchedule(time.Second)}
		err := k.run(time.Now(), time.Time{})
		if !errors.Is(err, ErrConnectionClosed) || !errors.Is(err, broken) {
			t.Fatalf("run = %v, want ErrConnectionClosed wrapping the write error", err)
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
