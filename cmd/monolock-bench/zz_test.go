package main

import "testing"

func TestZZ(t *testing.T) {
	for _, s := range scenarioTable(tableOptions{}) {
		for _, q := range []bool{false, true} {
			for _, v := range s.Variants(q) {
				t.Logf("%v %s/%s est=%v sess=%d maxrep=%d inter=%v", q, s.Name, v.Name, v.Estimate, v.Sessions, v.MaxRepetitions, v.Interleaved != nil)
			}
		}
	}
}
