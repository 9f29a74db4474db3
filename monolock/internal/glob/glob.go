// Package glob matches the patterns used by the ACL file and by the admin
// API's ?match= filter.
//
// A pattern matches a whole string. `*` matches any run of characters,
// including none and including `/`; `?` matches exactly one character (one
// Unicode code point); every other character, `\` included, is literal.
// There is no escaping and no character class.
//
// The package imports the standard library only and holds no state: it is
// safe for concurrent use.
package glob

import "unicode/utf8"

// Match reports whether s matches pattern as a whole.
//
// It runs in O(len(pattern) × len(s)) time in the worst case and never
// recurses, so a hostile pattern such as "*a*a*a*a*b" cannot blow the stack
// or take exponential time.
func Match(pattern, s string) bool {
	// p and i walk pattern and s. After a `*`, starP and starI remember where
	// to resume: on a mismatch the star swallows one more character of s.
	// Backtracking to the latest star only is enough because a `*` matches
	// any run, so an earlier star never needs to take a different length.
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			pc, pw := utf8.DecodeRuneInString(pattern[p:])
			switch {
			case pc == '*':
				starP, starI = p, i
				p += pw
				continue
			case pc == '?':
				_, sw := utf8.DecodeRuneInString(s[i:])
				p, i = p+pw, i+sw
				continue
			default:
				if sc, sw := utf8.DecodeRuneInString(s[i:]); sc == pc && sw == pw && s[i:i+sw] == pattern[p:p+pw] {
					p, i = p+pw, i+sw
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		_, sw := utf8.DecodeRuneInString(s[starI:])
		starI += sw
		p, i = starP+1, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
