package workload

import (
	"math"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{thousands(0), "0"},
		{thousands(999), "999"},
		{thousands(5000), "5,000"},
		{thousands(-1234567), "-1,234,567"},
		{thousands(math.MinInt64), "-9,223,372,036,854,775,808"},
		{fmtRate(300), "300/s"},
		{fmtRate(1.0 / 3), "0.333/s"},
		{fmtRate(31.67), "31.7/s"},
		{fmtRate(2e6), "2,000,000/s"},
		{fmtRate(7.7e27), "7.7e+27/s"},
		{percent(0.025), "2.5%"},
		{percent(0.85), "85%"},
		{percent(0.857), "85.7%"},
		{percent(0.0001), "0.01%"},
		{shareWords(1), "every one"},
		{shareWords(0.667), "about 67%"},
		{shareWords(0.0125), "about 1.2%"},
		{shareWords(0.001236), "about 1 in 809"},
		{fmtDuration(2 * time.Minute), "2m"},
		{fmtDuration(2 * time.Hour), "2h"},
		{fmtDuration(90 * time.Second), "1m30s"},
		{fmtDuration(roundNice(61996807 * time.Nanosecond)), "62ms"},
		{fmtDuration(roundNice(1964 * time.Millisecond)), "1.96s"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
