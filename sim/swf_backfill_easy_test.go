package sim

import "testing"

// EASY beats no backfill (strict order) on every log under hmrf and drf:
// its mean bounded slowdown is lower and its utilization no lower. On a
// prefix the machine is not always saturated, and utilization is then the
// offered load whatever the mode; where the queue backs up (KTH-SP2 here)
// EASY's is higher, and the table in the README shows the full logs.
func TestSWFLogsEASYBeatsNoBackfill(t *testing.T) {
	for _, name := range swfLogs {
		t.Run(name, func(t *testing.T) {
			w := loadSWFPrefix(t, name, swfPrefixJobs)
			for p, pair := range backfillRuns(t, w) {
				none, easy := pair[0], pair[1]
				if easy.Utilization[0] < none.Utilization[0] {
					t.Errorf("%s: utilization with easy %.4f, without %.4f", p, easy.Utilization[0], none.Utilization[0])
				}
				if easy.MeanBoundedSlowdown >= none.MeanBoundedSlowdown {
					t.Errorf("%s: bounded slowdown with easy %.2f, without %.2f", p, easy.MeanBoundedSlowdown, none.MeanBoundedSlowdown)
				}
			}
		})
	}
}
