package sched

import (
	"fmt"
	"testing"
)

// BenchmarkTreePlacement measures hdrf, dff and fawkes passes at the
// engine's benchmark scale (1,000 accounts, 10,000 nodes, 100,000 pending
// tasks), the accounts arranged in 10 organisations of 10 groups each, and
// reports nanoseconds and allocations per placement.
func BenchmarkTreePlacement(b *testing.B) {
	for _, p := range []Policy{HDRF, DFF, Fawkes} {
		b.Run(string(p), func(b *testing.B) {
			v := benchView(p)
			for o := range 10 {
				org := fmt.Sprintf("org%d", o)
				v.Groups = append(v.Groups, Group{Path: org, Weight: float64(1 + o%3)})
				for g := range 10 {
					v.Groups = append(v.Groups, Group{Path: fmt.Sprintf("%s/g%d", org, g), Weight: float64(1 + g%4)})
				}
			}
			for i := range v.Accounts {
				v.Accounts[i].Group = fmt.Sprintf("org%d/g%d", i%10, (i/10)%10)
				if p == Fawkes {
					v.Accounts[i].Share = 1 / float64(len(v.Accounts))
				}
			}
			benchSchedule(b, v)
		})
	}
}
