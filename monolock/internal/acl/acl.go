// Package acl decides which client identity may claim which lock.
//
// The rules come from a JSON file:
//
//	{"rules": [{"identity": "glob", "locks": ["glob", ...]}, ...]}
//
// Access is denied by default. A lock is allowed when any rule whose
// identity pattern matches the client's identity also has a lock pattern
// that matches the lock name (the union of all matching rules). Patterns
// are whole-string globs from package glob: `*` any run including `/`, `?`
// one character, everything else literal.
//
// A rule without an identity pattern or without lock patterns, an empty
// pattern, an unknown field or trailing data refuses to load: an ACL that
// silently grants less (or more) than the operator wrote is worse than a
// startup error.
package acl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/monolock/monolock-bench/monolock/internal/glob"
)

// ErrInvalid is wrapped by every error about the content of an ACL, as
// opposed to an I/O error reading it.
var ErrInvalid = errors.New("acl: invalid rules")

// Rule grants the identities matching Identity the locks matching any of
// Locks.
type Rule struct {
	Identity string   `json:"identity"`
	Locks    []string `json:"locks"`
}

// ACL is a validated, immutable rule set. The zero value denies everything.
// It is safe for concurrent use.
type ACL struct {
	rules []Rule
}

// file is the on-disk shape; Rules is a pointer so a missing key can be
// told apart from an explicit empty list (which denies everything).
type file struct {
	Rules *[]Rule `json:"rules"`
}

// Parse decodes and validates an ACL document.
func Parse(data []byte) (*ACL, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the JSON object", ErrInvalid)
	}
	if f.Rules == nil {
		return nil, fmt.Errorf(`%w: missing "rules" list`, ErrInvalid)
	}
	rules := *f.Rules
	for i, r := range rules {
		switch {
		case r.Identity == "":
			return nil, fmt.Errorf("%w: rule %d: no identity pattern", ErrInvalid, i)
		case len(r.Locks) == 0:
			return nil, fmt.Errorf("%w: rule %d (identity %q): no lock patterns", ErrInvalid, i, r.Identity)
		}
		for j, l := range r.Locks {
			if l == "" {
				return nil, fmt.Errorf("%w: rule %d (identity %q): lock pattern %d is empty", ErrInvalid, i, r.Identity, j)
			}
		}
	}
	return &ACL{rules: rules}, nil
}

// Load reads and parses the ACL file at path. The error names the path.
func Load(path string) (*ACL, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("acl: %w", err)
	}
	a, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// Allowed reports whether identity may claim lock.
func (a *ACL) Allowed(identity, lock string) bool {
	if a == nil {
		return false
	}
	for _, r := range a.rules {
		if !glob.Match(r.Identity, identity) {
			continue
		}
		for _, l := range r.Locks {
			if glob.Match(l, lock) {
				return true
			}
		}
	}
	return false
}

// Len returns the number of rules.
func (a *ACL) Len() int {
	if a == nil {
		return 0
	}
	return len(a.rules)
}
