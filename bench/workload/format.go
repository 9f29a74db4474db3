package workload

// The prose of a workload: its description, its warnings and the errors
// a user fixes a file from. They quote the file's own values in the
// file's notation (Go durations such as "2m", rates as "300/s", shares as
// percentages, counts with separators) and what follows from them (a
// mean hold, Little's law). Measured figures are not printed here: those
// go through results.Num and results.Format, as every table of the report
// does.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// countNoun writes "1 key", "5,000 keys".
func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return thousands(n) + " " + many
}

// thousands writes n with comma separators: 5000 → "5,000".
func thousands(n int) string {
	s := strconv.FormatUint(uint64(n), 10)
	sign := ""
	if n < 0 {
		s, sign = strconv.FormatUint(-uint64(n), 10), "-"
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// percent writes a share: 0.025 → "2.5%", 0.85 → "85%", 0.0001 → "0.01%".
func percent(f float64) string {
	p := f * 100
	if p >= 10 {
		return strings.TrimSuffix(strconv.FormatFloat(p, 'f', 1, 64), ".0") + "%"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

// shareWords writes a share of draws: "every one", "about 60%", "1 in 5,000".
func shareWords(p float64) string {
	switch {
	case p >= 1:
		return "every one"
	case p >= 0.1:
		return fmt.Sprintf("about %.0f%%", p*100)
	case p >= 0.01:
		return "about " + percent(p)
	}
	return "about 1 in " + thousands(int(math.Round(1/p)))
}

// roundNice rounds d to about three significant digits: 61.997ms → 62ms.
func roundNice(d time.Duration) time.Duration {
	for unit := time.Duration(1); unit < time.Hour; unit *= 10 {
		if d < 1000*unit {
			return d.Round(unit)
		}
	}
	return d.Round(time.Second)
}

// fmtRate writes a rate: "300/s", "0.5/s".
func fmtRate(r float64) string {
	if r >= 1e12 {
		return strconv.FormatFloat(r, 'g', 3, 64) + "/s"
	}
	if r >= 100 || r == math.Trunc(r) {
		return thousands(int(math.Round(r))) + "/s"
	}
	return strconv.FormatFloat(r, 'g', 3, 64) + "/s"
}

// fmtDuration prints d as a Go duration without trailing zero units
// ("2m" rather than "2m0s").
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
