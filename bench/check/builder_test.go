package check

import "testing"

// ms is one millisecond on the Mono timeline: hand-made histories give
// times in ms.
const ms Mono = 1_000_000

// builder makes hand-made histories: each method adds an operation's
// invocation at call and, when ret is nonzero, its completion at ret.
type builder struct {
	events []Event
	next   map[string]int64
}

func newBuilder() *builder { return &builder{next: map[string]int64{}} }

// op adds an operation of p; a zero ret leaves it pending.
func (b *builder) op(p string, f Func, call, ret Mono, typ Type, args, result Event) {
	b.next[p]++
	id := b.next[p]
	in := args
	in.T, in.Process, in.Type, in.F, in.ID = call*ms, p, Invoke, f, id
	b.events = append(b.events, in)
	if ret == 0 {
		return
	}
	out := result
	out.T, out.Process, out.Type, out.F, out.ID, out.Store = ret*ms, p, typ, f, id, args.Store
	b.events = append(b.events, out)
}

func (b *builder) acquire(p string, call, ret Mono, token uint64) {
	var r Event
	if token > 0 {
		r.Token = Ptr(token)
	}
	b.op(p, Acquire, call, ret, OK, Event{}, r)
}

func (b *builder) release(p string, call, ret Mono) {
	b.op(p, Release, call, ret, OK, Event{}, Event{})
}

// write writes v; token 0 means none. typ is the completion's type.
func (b *builder) write(p, store, v string, token uint64, call, ret Mono, typ Type, accepted bool) {
	args := Event{Store: store, Value: Ptr(v)}
	if token > 0 {
		args.Token = Ptr(token)
	}
	var r Event
	if typ == OK {
		r.Accepted = Ptr(accepted)
	}
	b.op(p, Write, call, ret, typ, args, r)
}

func (b *builder) read(p, store string, call, ret Mono, v string) {
	b.op(p, Read, call, ret, OK, Event{Store: store}, Event{Value: Ptr(v)})
}

// tokenRead is a read carrying token (a fenced read); typ is the
// completion's type (v is used for OK only).
func (b *builder) tokenRead(p, store string, token uint64, call, ret Mono, typ Type, v string) {
	var r Event
	if typ == OK {
		r.Value = Ptr(v)
	}
	b.op(p, Read, call, ret, typ, Event{Store: store, Token: Ptr(token)}, r)
}

func (b *builder) inc(p, store string, token uint64, call, ret Mono, typ Type, read int64, accepted bool) {
	args := Event{Store: store}
	if token > 0 {
		args.Token = Ptr(token)
	}
	r := Event{Read: Ptr(read), Wrote: Ptr(read + 1)}
	if typ == OK {
		r.Accepted = Ptr(accepted)
	}
	b.op(p, Increment, call, ret, typ, args, r)
}

// incWrite is inc whose write left at write (recorded as WriteT).
func (b *builder) incWrite(p, store string, token uint64, call, write, ret Mono, typ Type, read int64, accepted bool) {
	args := Event{Store: store}
	if token > 0 {
		args.Token = Ptr(token)
	}
	r := Event{Read: Ptr(read), Wrote: Ptr(read + 1), WriteT: Ptr(write * ms)}
	if typ == OK {
		r.Accepted = Ptr(accepted)
	}
	b.op(p, Increment, call, ret, typ, args, r)
}

func (b *builder) final(store string, t Mono, v int64) {
	b.op(FinalProcess, ReadCounter, t, t, OK, Event{Store: store}, Event{Read: Ptr(v)})
}

func (b *builder) lost(p string, t Mono) {
	b.events = append(b.events, Event{T: t * ms, Process: p, Type: Notice, F: Lost})
}

func (b *builder) fault(id int64, kind, target string, from, to Mono) {
	f := &Fault{Kind: kind, Target: target}
	b.events = append(b.events, Event{T: from * ms, Process: NemesisProcess, Type: Start, F: FuncFault, ID: id, Fault: f})
	if to > 0 {
		b.events = append(b.events, Event{T: to * ms, Process: NemesisProcess, Type: End, F: FuncFault, ID: id, Fault: f})
	}
}

// pause adds a client pause of target whose SIGSTOP was sent at from and
// seen to take effect at stopped, whose SIGCONT was sent at to and seen at
// running.
func (b *builder) pause(id int64, target string, from, stopped, to, running Mono) {
	f := &Fault{Kind: KindClientPause, Target: target}
	b.events = append(b.events,
		Event{T: from * ms, Process: NemesisProcess, Type: Start, F: FuncFault, ID: id, Fault: f, AckT: Ptr(stopped * ms)},
		Event{T: to * ms, Process: NemesisProcess, Type: End, F: FuncFault, ID: id, Fault: f, AckT: Ptr(running * ms)})
}

func (b *builder) history(t *testing.T) *History {
	t.Helper()
	h, err := NewHistory(b.events)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// server adds a server event of server at t on key; ttl (ms) is the TTL
// read back, 0 for none; token 0 means none.
func (b *builder) server(server string, f Func, t Mono, key string, token uint64, ttl int64, cause string) {
	e := Event{T: t * ms, Process: server, Type: Server, F: f, Key: key, Cause: cause}
	if token > 0 {
		e.Token = Ptr(token)
	}
	if ttl > 0 {
		e.TTLMS = Ptr(ttl)
	}
	b.events = append(b.events, e)
}
