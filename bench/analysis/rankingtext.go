package analysis

import "strings"

// JoinRanking joins a ranking's entries, best first, as benchstat reads
// one: "~" between figures inside each other's noise, "then" between
// better and worse (whatever the direction), and the noisy entries last
// after "not ranked (noise): ". figure words an entry's figure; a failed
// entry shows why it failed instead. It is the one joiner of rankings, so
// the decision and the sections read them alike.
func JoinRanking(es []Entry, figure func(Entry) string) string {
	var b strings.Builder
	for i, e := range es {
		switch {
		case i == 0 && e.Noise:
			b.WriteString("not ranked (noise): ")
		case i == 0:
		case e.Noise && !es[i-1].Noise:
			b.WriteString("; not ranked (noise): ")
		case e.Noise:
			b.WriteString(", ")
		case e.Place == es[i-1].Place:
			b.WriteString(" ~ ")
		default:
			b.WriteString(", then ")
		}
		b.WriteString(e.Contender + " ")
		if e.Failed != "" {
			b.WriteString(e.Failed)
			continue
		}
		b.WriteString(figure(e))
	}
	return b.String()
}
