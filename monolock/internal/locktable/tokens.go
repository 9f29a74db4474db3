package locktable

import "time"

// tokenShift is the number of low bits of a token that count grants within
// one second.
const tokenShift = 20

// tokenSequence is the global fencing-token sequence. It is not safe for
// concurrent use; the Table guards it with its mutex.
//
// The formula for the token of a grant at wall-clock time now is
//
//	next = max(last+1, uint64(now.Unix()) << 20)
//
// so a token is the unix second of the grant in the high 44 bits and a
// counter in the low 20 bits. Tokens strictly increase within one process.
// A new process (a restart, or a standby taking over) starts at
// unixSecond<<20 and therefore continues above every token of the previous
// one, without persisting anything, provided that
//   - it starts more than a second after the previous process's last grant,
//     with the wall clock not stepped back in between, and
//   - the previous process never ran ahead of its clock: at most 2^20 =
//     1,048,576 grants per second on average. A burst above that borrows
//     from later seconds (last+1 wins over the clock) and is repaid as soon
//     as the rate drops; a restart during such a debt may repeat tokens.
//
// 44 bits of seconds last until the year 557,000.
type tokenSequence struct {
	last uint64
}

// next returns the token for a grant at now.
func (s *tokenSequence) next(now time.Time) uint64 {
	t := max(s.last+1, uint64(now.Unix())<<tokenShift)
	s.last = t
	return t
}
