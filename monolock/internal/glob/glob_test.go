package glob

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		// Literals: whole-string, case-sensitive, no trimming.
		{"", "", true},
		{"", "a", false},
		{"a", "", false},
		{"abc", "abc", true},
		{"abc", "ABC", false},
		{"abc", "abcd", false},
		{"abc", "xabc", false},
		{"a b", "a b", true},
		{" a", "a", false},

		// `*`: any run, empty included, slashes included.
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"jobs/*", "jobs/", true},
		{"jobs/*", "jobs/nightly", true},
		{"jobs/*", "jobs/nightly/db", true},
		{"jobs/*", "jobs", false},
		{"jobs/*", "other/jobs/x", false},
		{"*/db", "jobs/nightly/db", true},
		{"*/db", "jobs/nightly/db2", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbYcZ", false},
		{"a*b*c", "acb", false},
		{"a**b", "ab", true},
		{"a**b", "aXYb", true},
		{"**", "", true},
		{"*a", "aaaa", true},
		{"*ab", "aaab", true},
		{"*ab", "aaba", false},
		{"*a*a*a*a*b", strings.Repeat("a", 200), false},
		{"*a*a*a*a*b", strings.Repeat("a", 200) + "b", true},

		// `?`: exactly one character, a code point not a byte.
		{"?", "", false},
		{"?", "a", true},
		{"?", "ab", false},
		{"?", "/", true},
		{"?", "é", true},
		{"?", "✓", true},
		{"??", "✓", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a?c", "abbc", false},
		{"?*", "", false},
		{"?*", "x", true},
		{"*?", "xyz", true},
		{"lock-?", "lock-1", true},
		{"lock-?", "lock-12", false},

		// Everything else is literal: no escaping, no classes, no braces.
		{`a\*`, `a\*`, true},
		{`a\*`, `a\xyz`, true}, // backslash is a literal followed by a real star
		{`a\*`, `a*`, false},
		{"[ab]", "a", false},
		{"[ab]", "[ab]", true},
		{"{a,b}", "a", false},
		{"a.b", "aXb", false},
		{"a+", "aa", false},

		// Non-ASCII literals.
		{"Ünïcode ✓", "Ünïcode ✓", true},
		{"Ü*✓", "Ünïcode ✓", true},
		{"ü*", "Ünïcode", false},

		// Identities look like URIs, DNS names or plain CNs.
		{"spiffe://example.org/ns/prod/*", "spiffe://example.org/ns/prod/sa/api", true},
		{"spiffe://example.org/ns/prod/*", "spiffe://example.org/ns/dev/sa/api", false},
		{"*.workers.internal", "a.workers.internal", true},
		{"*.workers.internal", "workers.internal", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestMatchInvalidUTF8IsLiteralBytes(t *testing.T) {
	// Lock names are valid UTF-8, but identities and patterns come from
	// outside; an invalid byte must match only itself, never act as a
	// wildcard, and never panic.
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"\xff", "\xff", true},
		{"\xff", "\xfe", false},
		{"\xff", "\uFFFD", false},
		{"\uFFFD", "\xff", false},
		{"?", "\xff", true},
		{"a*\xff", "abc\xff", true},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("a*b?c", "aXXbYc")
	f.Add("*", "")
	f.Add("?\xff*", "é\xffz")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := Match(pattern, s)
		// A pattern without wildcards matches exactly itself.
		if !strings.ContainsAny(pattern, "*?") && got != (pattern == s) {
			t.Fatalf("literal Match(%q, %q) = %v", pattern, s, got)
		}
		// Every string matches itself when it has no wildcards, and "*"
		// wrapped around any literal pattern still matches.
		if !strings.ContainsAny(s, "*?") {
			if !Match(s, s) {
				t.Fatalf("Match(%q, %q) = false", s, s)
			}
			if !Match("*"+s+"*", "x"+s+"y") {
				t.Fatalf("Match(*%q*, x%qy) = false", s, s)
			}
		}
	})
}
