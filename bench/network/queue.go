package network

// The line's queue of held packets, ordered by due time.

// packetHeap is a binary min-heap on (due, seq).
type packetHeap []packet

func (h packetHeap) less(i, j int) bool {
	return h[i].due < h[j].due || h[i].due == h[j].due && h[i].seq < h[j].seq
}

func (h *packetHeap) push(p packet) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s.less(i, parent) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *packetHeap) pop() packet {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s[last] = packet{}
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s.less(l, m) {
			m = l
		}
		if r < len(s) && s.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}
