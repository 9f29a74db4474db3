// Package check records the histories of the chaos scenario and checks
// them, in the manner of Jepsen: every client operation's invocation and
// completion, each client's "lost the lock" notice and the nemesis's
// faults on one clock, and checkers that are pure functions of the
// history (porcupine writes its visualisation file as well).
//
// # History format
//
// A history is JSON lines: one JSON object (an Event) per line, UTF-8.
// Each client process writes its own file with a Recorder; the nemesis
// writes another; Merge joins them by time into one history, written as
// histories/<contender>.jsonl in the run folder. Fields:
//
//	t         int64   every event: CLOCK_MONOTONIC in nanoseconds, read with
//	                  clock_gettime(CLOCK_MONOTONIC) in each process: one
//	                  timeline for all processes on the host
//	process   string  every event: the client process ("c1" …), "nemesis"
//	                  for faults, "final" for the harness's closing reads,
//	                  the server's name ("redis", "redis-2", "etcd") for
//	                  server events
//	type      string  invoke | ok | fail | info (operations); notice;
//	                  start | end | fault-failed | skip (faults); server
//	f         string  acquire | release | write | read | increment |
//	                  read-counter (operations); lost (notice); fault;
//	                  grant | renew | end | watching | unwatched (server)
//	id        int64   operations: numbered from 1 per process, shared by an
//	                  invocation and its completion; faults: the number in
//	                  the schedule; notices: 0
//	store     string  write, read, increment, read-counter: the store
//	                  ("fenced", "unfenced"); each store has one register and
//	                  one counter
//	token     uint64  acquire ok: the grant's fencing token; write, read and
//	                  increment invoke: the token sent with the operation
//	                  (a fenced store raises its mark with a read's token);
//	                  absent without one
//	value     string  write invoke: the value written (unique in the
//	                  history); read ok: the value read, "" while the
//	                  register was never written
//	accepted  bool    write ok, increment ok: whether the store took the
//	                  write (a fenced store rejects a stale token)
//	read      int64   increment ok (and info when known): the counter value
//	                  read; read-counter ok: the value read
//	wrote     int64   increment ok (and info when known): the value written,
//	                  read + 1
//	write_t   int64   increment ok (and info when it was sent): when the
//	                  write left (CLOCK_MONOTONIC ns), after the read and a
//	                  wait; absent in histories recorded before it existed
//	error     string  fail, info: why; fault-failed, skip: why
//	fault     object  fault events: {"kind", "target", "direction",
//	                  "step_ns"}: kind client-pause | client-host-loss |
//	                  client-partition | server-kill | server-pause |
//	                  clock-step; target the client or server; direction of
//	                  a one-sided partition (to-server: the client's packets
//	                  are dropped; from-server: the server's); step_ns the
//	                  size of a clock step
//	ack_t     int64   start and end of a client-pause: when the signal was
//	                  seen to take effect (CLOCK_MONOTONIC ns): the process
//	                  shown stopped in /proc after SIGSTOP, running again
//	                  after SIGCONT; t is then when the signal was sent;
//	                  absent when not seen within a second, for other
//	                  faults, and in histories recorded before it existed
//	key       string  server grant, renew, end: the server's key (etcd: the
//	                  holder's own key under the lock's prefix; ZooKeeper:
//	                  its sequential node; Redis: the lock's key)
//	rev       int64   server events of etcd: the revision of the change
//	                  (grant: the revision that made the key the owner);
//	                  of ZooKeeper: the lock node's pzxid when listed
//	token     uint64  (also) server grant and end of etcd and ZooKeeper:
//	                  the key's create revision (the node's czxid), the
//	                  holder's fencing token
//	ttl_ms    int64   server grant, renew of Redis: the key's PTTL read
//	                  back right after the change was seen
//	cause     string  server end of Redis: "del" (a client deleted the
//	                  key) or "expired" (its TTL ran out); absent where the
//	                  server does not tell (etcd: a delete whose revision
//	                  follows no release of the holder is a lease expiry)
//
// Meaning of the types:
//
//   - invoke: the process starts the operation; taken right before the
//     request leaves. A process runs one operation at a time.
//   - ok: it completed with the result given.
//   - fail: it certainly had no effect (nothing was sent, the server
//     refused it, as a fenced store refuses a read with a stale token; an
//     acquire that gave up).
//   - info: its outcome is unknown (a timeout, a connection lost
//     mid-request): it may take effect at any time after its invocation.
//     An operation with no completion before the history ends (its process
//     was killed or never resumed) counts the same.
//   - notice (f lost): the client learned, on its own, that it no longer
//     holds the lock it was granted (bench.Held's Lost closed before it
//     invoked release). Notices after a release are not recorded.
//   - start: a fault was applied; t is taken just before applying it.
//     end: it was healed; t is taken once healing completed (a restarted
//     server serves again), except for a client pause: when SIGCONT was
//     sent (ack_t: when the process ran again). The checkers take a paused
//     client as frozen from its ack_t at the start (else the start's t)
//     to the end's t. A start with no end lasts to the history's
//     end. fault-failed: applying failed, the fault did not happen. skip:
//     the contender or backend cannot do the kind (error says why).
//   - server: the lock server's own record, from a watcher in the bench
//     (an etcd watch on the lock's prefix; a ZooKeeper children watch on
//     the lock's node; a subscriber to Redis's keyspace notifications on
//     the lock's key, one per master), stamped
//     when the watcher received it (Redis: after the TTL read-back), in
//     the server's order. grant: the key's holder became the owner (etcd:
//     its key became the lowest create revision under the prefix; Redis:
//     the key was created); renew: its lease was extended; end: its hold
//     ended (release or expiry); watching: the watch is confirmed, every
//     change until unwatched (the watch broke; error says why) is seen.
//     Histories of contenders that record no server events have none.
//
// A completion needs only its results; the checkers take the arguments
// from the invocation. Unknown fields are an error when a history is read.
//
// Example:
//
//	{"t":1000,"process":"c1","type":"invoke","f":"acquire","id":1}
//	{"t":1800,"process":"c1","type":"ok","f":"acquire","id":1,"token":7}
//	{"t":1900,"process":"c1","type":"invoke","f":"write","id":2,"store":"fenced","token":7,"value":"c1-2"}
//	{"t":2100,"process":"c1","type":"ok","f":"write","id":2,"store":"fenced","accepted":true}
//	{"t":2200,"process":"c1","type":"invoke","f":"increment","id":3,"store":"unfenced","token":7}
//	{"t":2600,"process":"c1","type":"ok","f":"increment","id":3,"store":"unfenced","accepted":true,"read":4,"wrote":5,"write_t":2450}
//	{"t":2700,"process":"nemesis","type":"start","f":"fault","id":1,"fault":{"kind":"client-pause","target":"c1"}}
//	{"t":6900,"process":"nemesis","type":"end","f":"fault","id":1,"fault":{"kind":"client-pause","target":"c1"}}
//	{"t":7000,"process":"c1","type":"notice","f":"lost","id":0}
//
// # Checkers
//
//   - CheckLinearizable: the register of a store against its model with
//     porcupine (fenced: a write is accepted, and a read with a token
//     answered, iff its token is at least the highest the store took, and
//     an answered read raises it to its token; unfenced: last write wins),
//     bounded in time.
//   - CheckExclusion: holds (grant's completion to release's invocation or
//     the lost notice) of different clients that overlap, each marked as
//     the earlier holder frozen by a client pause through it (inherent to
//     any lease: only a fencing token keeps the frozen holder's late writes
//     out) or running (the lock let a running client believe while another
//     was granted).
//   - CheckLostUpdates: acknowledged increments missing from the counter's
//     final value, and acknowledged increments that wrote the same value.
//   - CheckStaleWrites: writes a store accepted after a newer grant had
//     completed when the write left (an increment's write_t, else the
//     invocation). Grants are ordered by real time (one completed before
//     the other's acquire was invoked); only grants whose acquires ran
//     concurrently are ordered by token, and not across a server restart,
//     else by completion. It also counts the current holder's writes the
//     store refused (a fenced store locking out the rightful holder, as
//     when a restarted server starts its tokens over) and the writes that
//     left after the writer's own lost notice.
//   - CheckTokenOrder: grants whose token is not above the token of a
//     grant released before their acquire was invoked.
//   - ClassifyOverlaps: each running overlap by the server events: server
//     granted early (no end of the first hold before the second grant in
//     the server's order, or an expiry before the last renewal's TTL
//     read back ran out), client learned late (the server ended the first
//     hold in time), both (early, and the first holder believed past the
//     time its lease was due), or unclassified (no server record covers
//     it).
//
// Each violation is attributed to the faults active during its cause
// window that act on a client it involves or on a server (a fault on
// another client is never blamed; an overlap under a frozen holder is
// blamed on the pause alone), so rates can be given with faults as trials
// (Wilson), and the first violation of each kind comes with an excerpt of
// the history.
// Check runs them all into a Verdict.
package check
