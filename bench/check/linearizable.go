package check

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// DefaultLinearizabilityTimeout bounds one porcupine check when
// LinearizabilityOptions.Timeout is zero. Lock-protected register
// histories are nearly sequential and take milliseconds; the bound is for
// the pathological case, so that a run never hangs on its checker.
const DefaultLinearizabilityTimeout = 20 * time.Second

// Linearizability is the linearizability checker's verdict for one
// store's register.
type Linearizability struct {
	Valid Validity `json:"valid"`
	Store string   `json:"store"`
	// Fenced says which model the register was checked against.
	Fenced bool `json:"fenced"`
	// Operations counts the register operations checked.
	Operations int `json:"operations"`
	// Took is how long porcupine ran.
	Took time.Duration `json:"took_ns"`
	// Visualization is the path of porcupine's HTML visualisation of a
	// history that is not linearizable ("" when none was asked for or it
	// could not be written: Reason says why).
	Visualization string `json:"visualization,omitempty"`
	// Reason says why the verdict is unknown or no visualisation was
	// written.
	Reason string `json:"reason,omitempty"`
	// First is the first operation no linearization could include, with
	// the history around it.
	First *Violation `json:"first,omitempty"`
}

// LinearizabilityOptions configures CheckLinearizable.
type LinearizabilityOptions struct {
	// Fenced selects the fenced model: a write is accepted iff it carries
	// a token at least the highest the store has taken so far (an equal
	// token is the same grant writing again, which the guarded store
	// accepts); a read with a token is answered iff its token is at least
	// that high, and raises the highest to it (the fenced read of package
	// guardedstore). Else last write wins and every write is accepted.
	Fenced bool
	// Timeout bounds porcupine; zero means DefaultLinearizabilityTimeout.
	// When it runs out the verdict is Unknown.
	Timeout time.Duration
	// Visualization is the path to write porcupine's HTML visualisation
	// to when the history is not linearizable; "" writes none. Its folder
	// is created.
	Visualization string
}

// registerInput is a register operation's input.
type registerInput struct {
	write bool
	value string
	token *uint64
	// process and id name the operation in the visualisation.
	process string
	id      int64
}

// registerOutput is a register operation's output; known is false for an
// operation of unknown outcome (info or pending).
type registerOutput struct {
	value    string
	accepted bool
	known    bool
}

// fencedState is the fenced register: its value and the highest token
// it took (with a write or a read).
type fencedState struct {
	value string
	high  uint64
}

// registerModel returns the porcupine model of the register of a fenced
// or an unfenced store. The register starts empty ("").
func registerModel(fenced bool) porcupine.Model {
	m := porcupine.Model{
		DescribeOperation: func(in, out any) string {
			i, o := in.(registerInput), out.(registerOutput)
			if !i.write {
				if !o.known {
					return fmt.Sprintf("%s#%d read(%s) → unknown", i.process, i.id, strings.TrimPrefix(tokenText(i.token), " "))
				}
				return fmt.Sprintf("%s#%d read(%s) → %q", i.process, i.id, strings.TrimPrefix(tokenText(i.token), " "), o.value)
			}
			result := "unknown"
			if o.known {
				result = map[bool]string{true: "accepted", false: "rejected"}[o.accepted]
			}
			return fmt.Sprintf("%s#%d write(%q%s) → %s", i.process, i.id, i.value, tokenText(i.token), result)
		},
	}
	if fenced {
		m.Init = func() any { return fencedState{} }
		m.Step = func(state, in, out any) (bool, any) {
			s, i, o := state.(fencedState), in.(registerInput), out.(registerOutput)
			if !i.write {
				if i.token == nil {
					return o.value == s.value, s // a read that fences nothing
				}
				if *i.token < s.high {
					// The store rejects it: an answered read cannot be.
					return !o.known, s
				}
				if o.known && o.value != s.value {
					return false, s
				}
				return true, fencedState{value: s.value, high: *i.token}
			}
			accept := i.token != nil && *i.token >= s.high
			if o.known && o.accepted != accept {
				return false, s
			}
			if !accept {
				return true, s
			}
			return true, fencedState{value: i.value, high: *i.token}
		}
		m.DescribeState = func(state any) string {
			s := state.(fencedState)
			return fmt.Sprintf("%q (highest token %d)", s.value, s.high)
		}
		return m
	}
	m.Init = func() any { return "" }
	m.Step = func(state, in, out any) (bool, any) {
		s, i, o := state.(string), in.(registerInput), out.(registerOutput)
		if !i.write {
			return o.value == s, s
		}
		if o.known && !o.accepted {
			return false, s // an unfenced store rejects nothing
		}
		return true, i.value
	}
	m.DescribeState = func(state any) string { return fmt.Sprintf("%q", state.(string)) }
	return m
}

// CheckLinearizable checks with porcupine that the store's register
// operations (Write and Read) are linearizable against the store's model.
// Failed operations had no effect and are left out, as are reads of
// unknown outcome in the unfenced model (they change nothing); a write of
// unknown outcome (info, or pending at the end), and in the fenced model
// a read with a token (it may have raised the mark), may take effect at
// any time after its invocation, so it is given a return after the
// history's end. On a violation the visualisation is written to
// o.Visualization; on a timeout the verdict is Unknown.
func CheckLinearizable(h *History, store string, o LinearizabilityOptions) Linearizability {
	l := Linearizability{Store: store, Fenced: o.Fenced}
	clients := map[string]int{}
	for i, p := range h.processes() {
		clients[p] = i
	}
	var ops []porcupine.Operation
	var from []Operation // the history's operation of each ops entry
	for _, op := range h.Ops {
		in := op.Invoke
		if in.Store != store || in.F != Write && in.F != Read {
			continue
		}
		pin := registerInput{write: in.F == Write, token: in.Token, process: in.Process, id: in.ID}
		if in.Value != nil {
			pin.value = *in.Value
		}
		var out registerOutput
		ret := int64(h.End()) + 1
		switch op.Outcome() {
		case OK:
			ret = int64(op.Done.T)
			out.known = true
			if op.Done.Value != nil {
				out.value = *op.Done.Value
			}
			if op.Done.Accepted != nil {
				out.accepted = *op.Done.Accepted
			}
		case Info:
			if !pin.write && (!o.Fenced || pin.token == nil) {
				continue
			}
		default:
			continue
		}
		ops = append(ops, porcupine.Operation{ClientId: clients[in.Process], Input: pin, Call: int64(in.T), Output: out, Return: ret})
		from = append(from, op)
	}
	l.Operations = len(ops)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultLinearizabilityTimeout
	}
	model := registerModel(o.Fenced)
	begin := time.Now()
	result, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	l.Took = time.Since(begin)
	switch result {
	case porcupine.Ok:
		l.Valid = Valid
		return l
	case porcupine.Unknown:
		l.Valid = Unknown
		l.Reason = fmt.Sprintf("porcupine did not decide within %v (%d operations)", timeout, len(ops))
		return l
	}
	l.Valid = Invalid
	if i := firstUnlinearized(ops, info); i >= 0 {
		op := from[i]
		l.First = &Violation{
			At:      op.Invoke.T,
			What:    fmt.Sprintf("no linearization of store %s's register includes %s", store, model.DescribeOperation(ops[i].Input, ops[i].Output)),
			Faults:  faultsBlamed(h, cause{from: op.Invoke.T, to: Mono(min(ops[i].Return, int64(h.End()))), clients: map[string]Mono{op.Invoke.Process: op.Invoke.T}}),
			Excerpt: excerpt(h, op.Index, op.DoneIndex),
		}
	}
	switch {
	case o.Visualization == "":
		l.Reason = "no visualisation asked for"
	default:
		if err := os.MkdirAll(filepath.Dir(o.Visualization), 0o755); err != nil {
			l.Reason = fmt.Sprintf("visualisation not written: %v", err)
		} else if err := porcupine.VisualizePath(model, info, o.Visualization); err != nil {
			l.Reason = fmt.Sprintf("visualisation not written: %v", err)
		} else {
			l.Visualization = o.Visualization
		}
	}
	return l
}

// firstUnlinearized returns the index in ops of the operation, among those
// the longest partial linearization leaves out, that returned first: where
// every linearization got stuck. -1 when porcupine gave none.
func firstUnlinearized(ops []porcupine.Operation, info porcupine.LinearizationInfo) int {
	parts := info.PartialLinearizations()
	if len(parts) == 0 {
		return -1
	}
	var longest []int
	for _, p := range parts[0] {
		if len(p) > len(longest) {
			longest = p
		}
	}
	in := make([]bool, len(ops))
	for _, id := range longest {
		in[id] = true
	}
	var out []int
	for i := range ops {
		if !in[i] {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		return -1
	}
	return slices.MinFunc(out, func(a, b int) int { return cmp.Compare(ops[a].Return, ops[b].Return) })
}
