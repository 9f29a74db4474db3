package monolock

import (
	"context"
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/monolock/monolock-bench/monolock/protocol"
)

func TestDoSemantics(t *testing.T) {
	granted := protocol.AppendAcquired(nil, 77)
	holdAndAnswer := func(p *peerConn) { p.write(granted); p.answerHeartbeats(granted) }
	fnErr := errors.New("fn failed")
	tests := []struct {
		name   string
		script func(p *peerConn)
		// fn runs with Do's cancel func; it returns fn's result.
		fn   func(ctx context.Context, cancelDo context.CancelFunc) error
		want []error // each must match Do's result; nil: Do returns nil
	}{
		{"fn's error is returned", holdAndAnswer, func(context.Context, context.CancelFunc) error {
			return fnErr
		}, []error{fnErr}},
		{"loss cancels fn's ctx and is joined although fn returned nil", func(p *peerConn) {
			p.write(granted)
			time.Sleep(50 * time.Millisecond)
			p.write(protocol.AppendError(nil, protocol.CodeClosedByAdmin, "force-release"))
		}, func(ctx context.Context, _ context.CancelFunc) error {
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				return errors.New("ctx not cancelled on loss")
			}
			if !errors.Is(context.Cause(ctx), protocol.ErrClosedByAdmin) {
				return errors.New("cause is not the loss: " + context.Cause(ctx).Error())
			}
			return nil
		}, []error{protocol.ErrClosedByAdmin}},
		{"loss and fn's error both reported", func(p *peerConn) {
			p.write(granted)
			p.write(protocol.AppendError(nil, protocol.CodeClosedByAdmin, ""))
		}, func(ctx context.Context, _ context.CancelFunc) error {
			<-ctx.Done()
			return fnErr
		}, []error{protocol.ErrClosedByAdmin, fnErr}},
		{"cancelling Do's ctx asks fn to stop; heartbeats go on; not a loss", holdAndAnswer, func(ctx context.Context, cancelDo context.CancelFunc) error {
			cancelDo()
			<-ctx.Done()
			time.Sleep(600 * time.Millisecond) // two leases: only heartbeats keep it
			if context.Cause(ctx) != context.Canceled {
				return errors.New("cause is not Do's cancellation")
			}
			return nil
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := scriptedPeer(t, tt.script)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var token uint64
				err := c.Do(ctx, "a", 300*time.Millisecond, func(ctx context.Context, tok uint64) error {
					token = tok
					return tt.fn(ctx, cancel)
				})
				if token != 77 {
					t.Errorf("fn got token %d, want 77", token)
				}
				if tt.want == nil && err != nil {
					t.Fatalf("Do = %v, want nil", err)
				}
				for _, w := range tt.want {
					if !errors.Is(err, w) {
						t.Errorf("Do = %v, want it to match %v", err, w)
					}
				}
			})
		})
	}
}

func TestDoReleasesOnPanic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		closed := make(chan struct{})
		c := scriptedPeer(t, func(p *peerConn) {
			p.write(protocol.AppendAcquired(nil, 1))
			p.answerHeartbeats(protocol.AppendAcquired(nil, 1))
			close(closed)
		})
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("recovered %v, want the re-panic of boom", r)
				}
				synctest.Wait()
				select {
				case <-closed: // released before the panic reached us
				default:
					t.Fatal("connection still open after the panic")
				}
			}()
			c.Do(t.Context(), "a", time.Second, func(context.Context, uint64) error { panic("boom") })
		}()
	})
}

func TestDoCancelWhileQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := scriptedPeer(t, func(p *peerConn) {
			p.write(protocol.AppendWaiting(nil))
			p.answerHeartbeats(protocol.AppendWaiting(nil))
		})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		err := c.Do(ctx, "a", time.Second, func(context.Context, uint64) error {
			t.Error("fn ran while queued")
			return nil
		})
		if err != context.DeadlineExceeded {
			t.Fatalf("Do = %v, want context.DeadlineExceeded unchanged", err)
		}
	})
}

func TestDoRetry(t *testing.T) {
	errFrame := func(c protocol.Code) []byte { return protocol.AppendError(nil, c, "") }
	granted := protocol.AppendAcquired(nil, 3)
	tests := []struct {
		name    string
		answers [][]byte // the first frame sent on connection i (the last repeats)
		loseRun bool     // after the grant, end the session with 0x02
		want    error
		conns   int32
	}{
		{"server conditions are retried", [][]byte{errFrame(protocol.CodeShuttingDown), errFrame(0x05), errFrame(protocol.CodeClosedByAdmin), granted}, false, nil, 4},
		{"closed connection is retried", [][]byte{nil, granted}, false, nil, 2},
		{"client error is not retried", [][]byte{errFrame(protocol.CodeNotAuthorized)}, false, protocol.ErrNotAuthorized, 1},
		{"unknown client error is not retried", [][]byte{errFrame(0x42)}, false, &protocol.Error{Code: 0x42}, 1},
		{"protocol violation is not retried", [][]byte{{0x7f}}, false, ErrProtocolViolation, 1},
		{"fn never reruns after a loss", [][]byte{granted}, true, protocol.ErrClosedByAdmin, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var conns atomic.Int32
				c := scriptedPeer(t, func(p *peerConn) {
					i := int(conns.Add(1)) - 1
					frame := tt.answers[min(i, len(tt.answers)-1)]
					if frame == nil {
						return // close without answering
					}
					p.write(frame)
					if frame[0] != byte(protocol.TypeAcquired) {
						io.Copy(io.Discard, p.conn)
						return
					}
					if tt.loseRun {
						time.Sleep(20 * time.Millisecond)
						p.write(errFrame(protocol.CodeClosedByAdmin))
						return
					}
					p.answerHeartbeats(granted)
				})
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				runs := 0
				err := c.DoRetry(ctx, "a", time.Second, func(ctx context.Context, token uint64) error {
					runs++
					if tt.loseRun {
						<-ctx.Done()
					}
					return nil
				})
				if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
					t.Fatalf("DoRetry = %v, want %v", err, tt.want)
				}
				if got := conns.Load(); got != tt.conns {
					t.Errorf("%d connections, want %d", got, tt.conns)
				}
				if wantRuns := map[bool]int{true: 1, false: 0}[tt.want == nil || tt.loseRun]; runs != wantRuns {
					t.Errorf("fn ran %d times, want %d", runs, wantRuns)
				}
			})
		})
	}
}

// TestDoRetryUntilCtxEnds: refused dials are retried with backoff until
// ctx ends, and ctx's error is returned unchanged.
func TestDoRetryUntilCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var dials atomic.Int32
		c := New(Config{Address: "refused:1", Dialer: refusingDialer{&dials}})
		ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
		defer cancel()
		err := c.DoRetry(ctx, "a", time.Second, func(context.Context, uint64) error { return nil })
		if err != context.DeadlineExceeded {
			t.Fatalf("DoRetry = %v, want context.DeadlineExceeded unchanged", err)
		}
		// Backoff 100ms, 200ms, 400ms, 800ms with jitter [d/2, d]: the
		// dials at 0, [50, 100], [150, 300] and [350, 700]ms; the next one
		// would come after 750ms.
		if n := dials.Load(); n != 4 {
			t.Fatalf("%d dials in 700ms, want 4", n)
		}
	})
}

// refusingDialer refuses every dial, as a host where nothing listens, and
// counts them.
type refusingDialer struct{ n *atomic.Int32 }

func (d refusingDialer) DialContext(context.Context, string, string) (net.Conn, error) {
	d.n.Add(1)
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
}
