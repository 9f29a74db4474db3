package network

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The delay line. It runs in a child process of the bench (see child.go)
// on one OS thread that owns all of its state: an epoll set over every
// link's TUN descriptor and an eventfd for commands, waited on with
// epoll_pwait2, whose nanosecond timeout is the next packet's due time. It reads each packet as it leaves a namespace,
// decides from the destination address which link it goes out on, gives
// it a due time from the path's profile and holds it in a queue ordered by
// due time; when the time comes it writes the packet into the destination
// namespace. Nothing in the packet is changed.

// rateBuffer is how long a packet may wait in the queue of a link with a
// rate before the link drops it.
const rateBuffer = 50 * time.Millisecond

// bufSize holds any packet of a linkMTU device.
const bufSize = 2048

// maxLead bounds the wake-up lead: the line never sends a packet more
// than this ahead of its due time.
const maxLead = 200 * time.Microsecond

// tagWake marks the eventfd in the epoll set; links are marked by index.
const tagWake = -1

type packet struct {
	due      int64
	seq      uint64
	src, dst uint8
	buf      []byte
}

type lineHost struct {
	fd              int
	link            linkParams
	fault           Fault
	outBusy, inBusy int64 // when the link is free again, per direction (rate)
	counters        hostCounters
}

type lineConfig struct {
	Subnet     [3]byte `json:"subnet"`
	Seed       uint64  `json:"seed"`
	QueueLimit int     `json:"queue_limit"`
	Spin       int64   `json:"spin"`
	RealTime   bool    `json:"real_time"`
}

type line struct {
	cfg         lineConfig
	epfd, wakfd int
	base        time.Time
	rng         *rand.Rand

	hosts   [maxHosts + 1]*lineHost // index 0 is the bench
	lastDue [maxHosts + 1][maxHosts + 1]int64
	blocked [maxHosts + 1][maxHosts + 1]bool
	vips    [maxHosts + 1]*vipRoute // by the virtual IP's index (vip.go)

	heap packetHeap
	seq  uint64
	free [][]byte
	lead int64

	stats lineStats

	mu   sync.Mutex
	cmds []func(*line) bool // run on the loop; true stops it
}

func newLine(cfg lineConfig) (*line, error) {
	l := &line{cfg: cfg, epfd: -1, wakfd: -1, base: time.Now(),
		rng:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		lead: int64(20 * time.Microsecond)}
	l.stats.Hosts = map[int]hostCounters{}
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("network: epoll: %w", err)
	}
	if l.wakfd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.close()
		return nil, fmt.Errorf("network: eventfd: %w", err)
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.wakfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: tagWake}); err != nil {
		l.close()
		return nil, fmt.Errorf("network: epoll add: %w", err)
	}
	if _, err := epollWait(l.epfd, make([]unix.EpollEvent, 1), 0); err != nil {
		l.close()
		return nil, fmt.Errorf("network: the line needs epoll_pwait2 (Linux 5.11 or later): %w", err)
	}
	return l, nil
}

func (l *line) close() {
	for _, fd := range []int{l.epfd, l.wakfd} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	for _, h := range l.hosts {
		if h != nil {
			unix.Close(h.fd)
		}
	}
}

func (l *line) now() int64 { return int64(time.Since(l.base)) }

// do runs f on the loop's thread and waits for it; f returning true stops
// the loop after it.
func (l *line) do(f func(*line) bool) {
	done := make(chan struct{})
	l.mu.Lock()
	l.cmds = append(l.cmds, func(l *line) bool { defer close(done); return f(l) })
	l.mu.Unlock()
	var one [8]byte
	one[0] = 1
	rawWrite(l.wakfd, one[:])
	<-done
}

// run is the loop. It returns after a command asked it to stop.
func (l *line) run() {
	runtime.LockOSThread()
	// Timers of this thread fire on time rather than up to 50 µs late.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if l.cfg.RealTime {
		// A wire does not wait for a CPU: under SCHED_FIFO the line runs
		// as soon as a packet or its due time comes, ahead of the bench's
		// and the servers' threads. Where the policy is refused, it runs
		// at normal priority and its lateness shows in Stats.
		_ = unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: 1}, 0)
	}
	events := make([]unix.EpollEvent, maxHosts+2)
	var tick [8]byte
	for {
		l.flush()
		timeout, target := int64(-1), int64(0)
		if len(l.heap) > 0 {
			next := l.heap[0].due
			if l.cfg.Spin == 0 {
				next -= l.lead
			}
			// With Spin, sleep until Spin before the due time and poll
			// from there on.
			target = next - l.cfg.Spin
			timeout = max(target-l.now(), 0)
		}
		n, err := epollWait(l.epfd, events, timeout)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			panic(fmt.Sprintf("network: line: epoll_pwait2: %v", err))
		}
		l.stats.Wakeups++
		if n == 0 && timeout > 0 {
			l.stats.TimerWakes++
			l.adjustLead(l.now() - target)
		}
		for _, ev := range events[:n] {
			if ev.Fd == tagWake {
				rawRead(l.wakfd, tick[:])
				if l.runCommands() {
					return
				}
				continue
			}
			l.readFrom(int(ev.Fd))
		}
	}
}

// epollWait waits for events for up to timeout nanoseconds (negative:
// for ever, 0: not at all).
//
// It is a raw system call: the runtime takes the loop for a running
// goroutine, not one blocked in a system call. Otherwise the runtime's
// monitor, seeing a thread almost always in a system call, polls every
// 20 µs — a fifth of the line's CPU at a few thousand packets a second.
// The runtime can still stop the loop (for a garbage collection): its
// preemption signal interrupts epoll_pwait2, which is never restarted.
func epollWait(epfd int, events []unix.EpollEvent, timeout int64) (int, error) {
	var ts *unix.Timespec
	if timeout >= 0 {
		t := unix.NsecToTimespec(timeout)
		ts = &t
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(unsafe.Pointer(ts)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawRead and rawWrite are read(2) and write(2) without the runtime's
// syscall bookkeeping, which costs more than the calls themselves: every
// descriptor of the line is non-blocking, so they never block.
func rawRead(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// adjustLead moves the lead one step towards the median of the timeout's
// wake-up lateness: the loop wakes that much ahead of a due time, so that
// packets leave at it, half a little early, half a little late.
func (l *line) adjustLead(overshoot int64) {
	const step = int64(time.Microsecond)
	if overshoot > l.lead {
		l.lead = min(l.lead+step, int64(maxLead))
	} else {
		l.lead = max(l.lead-step, 0)
	}
}

func (l *line) runCommands() (stop bool) {
	l.mu.Lock()
	cmds := l.cmds
	l.cmds = nil
	l.mu.Unlock()
	for _, c := range cmds {
		if c(l) {
			stop = true
		}
	}
	return stop
}

func (l *line) buffer() []byte {
	if n := len(l.free); n > 0 {
		b := l.free[n-1]
		l.free = l.free[:n-1]
		return b
	}
	return make([]byte, bufSize)
}

func (l *line) recycle(b []byte) { l.free = append(l.free, b[:bufSize]) }

// readFrom reads what the host at index src sent, up to a batch, so that
// one busy link cannot starve the others; packets that fall due meanwhile
// leave between two reads rather than after the batch.
func (l *line) readFrom(src int) {
	h := l.hosts[src]
	if h == nil {
		return
	}
	for range 64 {
		b := l.buffer()
		n, err := rawRead(h.fd, b)
		if err != nil || n <= 0 {
			l.recycle(b)
			return
		}
		l.route(src, b[:n])
		l.flush()
	}
}

// route decides a packet's fate and due time and queues it.
func (l *line) route(src int, pkt []byte) {
	now := l.now()
	dst, ok := l.destination(pkt)
	if !ok || dst == src {
		l.stats.Drops.Unroutable++
		l.recycle(pkt)
		return
	}
	sh, dh := l.hosts[src], l.hosts[dst]
	if l.faulted(src, dst) {
		l.drop(&l.stats.Drops.Fault, sh, dh, pkt)
		return
	}
	p := pathParams(src, dst, sh, dh)
	if p.Loss > 0 && l.rng.Float64() < p.Loss {
		l.drop(&l.stats.Drops.Loss, sh, dh, pkt)
		return
	}
	if len(l.heap) >= l.cfg.QueueLimit {
		l.drop(&l.stats.Drops.Queue, sh, dh, pkt)
		return
	}
	// A link with a rate sends one packet after the other; like a router's
	// buffer, its queue holds rateBuffer's worth, and a packet beyond
	// that is dropped (an unbounded queue would outgrow TCP's minimum
	// retransmission timeout and make it resend what is still queued).
	t, outEnd, inEnd := now, int64(-1), int64(-1)
	bits := int64(len(pkt)) * 8
	if src != 0 && sh.link.Rate > 0 {
		if sh.outBusy-t > int64(rateBuffer) {
			l.drop(&l.stats.Drops.Queue, sh, dh, pkt)
			return
		}
		t = max(t, sh.outBusy) + bits*int64(time.Second)/sh.link.Rate
		outEnd = t
	}
	if dst != 0 && dh.link.Rate > 0 {
		if dh.inBusy-t > int64(rateBuffer) {
			l.drop(&l.stats.Drops.Queue, sh, dh, pkt)
			return
		}
		t = max(t, dh.inBusy) + bits*int64(time.Second)/dh.link.Rate
		inEnd = t
	}
	if outEnd >= 0 {
		sh.outBusy = outEnd
	}
	if inEnd >= 0 {
		dh.inBusy = inEnd
	}
	hold := p.Hold
	if p.Jitter > 0 {
		hold += int64((l.rng.Float64() - 0.5) * float64(p.Jitter))
	}
	due := t + max(hold, 0)
	// A wire keeps order: no packet overtakes an earlier one on its path.
	due = max(due, l.lastDue[src][dst])
	l.lastDue[src][dst] = due
	l.seq++
	l.heap.push(packet{due: due, seq: l.seq, src: uint8(src), dst: uint8(dst), buf: pkt})
	l.stats.MaxQueued = max(l.stats.MaxQueued, len(l.heap))
	l.stats.Held.record(time.Duration(len(l.heap)))
}

// destination returns the index of the host a packet is addressed to.
func (l *line) destination(pkt []byte) (int, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return 0, false
	}
	if pkt[16] != l.cfg.Subnet[0] || pkt[17] != l.cfg.Subnet[1] || pkt[18] != l.cfg.Subnet[2] {
		return 0, false
	}
	i := int(pkt[19]) - 1 // host i has address .i+1
	if i == 0 || i >= benchSourcesFrom-1 {
		i = 0 // one of the bench's addresses
	}
	if i > 0 && i <= maxHosts && l.vips[i] != nil {
		i = l.vips[i].deliver(pkt)
	}
	if i < 0 || i > maxHosts || l.hosts[i] == nil {
		return 0, false
	}
	return i, true
}

func (l *line) faulted(src, dst int) bool {
	sh, dh := l.hosts[src], l.hosts[dst]
	return sh.fault&DropOut != 0 || dh.fault&DropIn != 0 || l.blocked[src][dst]
}

func (l *line) drop(reason *uint64, sh, dh *lineHost, pkt []byte) {
	*reason++
	if sh != nil {
		sh.counters.Dropped++
	}
	if dh != nil && dh != sh {
		dh.counters.Dropped++
	}
	l.recycle(pkt)
}

// pathParams returns the parameters of the path between two hosts: a
// host's own link to or from the bench, the farther host's between two.
func pathParams(src, dst int, sh, dh *lineHost) linkParams {
	switch {
	case src == 0:
		return dh.link
	case dst == 0:
		return sh.link
	case sh.link.RTT >= dh.link.RTT:
		return sh.link
	default:
		return dh.link
	}
}

// flush delivers every packet that is due, the lead included.
func (l *line) flush() {
	early := l.lead
	if l.cfg.Spin > 0 {
		early = 0
	}
	for len(l.heap) > 0 {
		now := l.now()
		if l.heap[0].due > now+early {
			return
		}
		p := l.heap.pop()
		sh, dh := l.hosts[p.src], l.hosts[p.dst]
		switch {
		case sh == nil || dh == nil:
			l.drop(&l.stats.Drops.Unroutable, sh, dh, p.buf)
			continue
		case l.faulted(int(p.src), int(p.dst)):
			l.drop(&l.stats.Drops.Fault, sh, dh, p.buf)
			continue
		}
		if _, err := rawWrite(dh.fd, p.buf); err != nil {
			l.drop(&l.stats.Drops.WriteErr, sh, dh, p.buf)
			continue
		}
		n := uint64(len(p.buf))
		l.stats.Packets++
		l.stats.Bytes += n
		sh.counters.Out++
		sh.counters.OutBytes += n
		dh.counters.In++
		dh.counters.InBytes += n
		if late := now - p.due; late >= 0 {
			l.stats.Late.record(time.Duration(late))
		} else {
			l.stats.Early++
		}
		l.recycle(p.buf)
	}
}

// setHost adds or replaces the link at index i; a replaced descriptor is
// closed (its device vanishes).
func (l *line) setHost(i, fd int, p linkParams, f Fault) error {
	if old := l.hosts[i]; old != nil {
		unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, old.fd, nil)
		unix.Close(old.fd)
		old.fd = fd
		old.link, old.fault = p, f
	} else {
		l.hosts[i] = &lineHost{fd: fd, link: p, fault: f}
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}); err != nil {
		return fmt.Errorf("network: epoll add link %d: %w", i, err)
	}
	return nil
}

func (l *line) removeHost(i int) {
	h := l.hosts[i]
	if h == nil {
		return
	}
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, h.fd, nil)
	unix.Close(h.fd)
	l.hosts[i] = nil
	for j := range l.lastDue {
		l.lastDue[i][j], l.lastDue[j][i] = 0, 0
		l.blocked[i][j], l.blocked[j][i] = false, false
	}
}

func (l *line) snapshot() lineStats {
	s := l.stats
	s.Elapsed = l.now()
	s.Queued = len(l.heap)
	s.Lead = l.lead
	s.Hosts = map[int]hostCounters{}
	for i, h := range l.hosts {
		if h != nil {
			s.Hosts[i] = h.counters
		}
	}
	return s
}
