package sim

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/longfair/longfair/sched"
)

// TestSWFBackfillTraceDigest pins a 20,000-job EASY-backfill replay of the
// KTH-SP2 log (the shape BenchmarkSWFBackfill1M replays) to digests of its
// outcome — every trace event, the JSON report and the pass count — so a
// speed-up that changes any outcome fails here. (The first digests were
// taken before the replay and the engine's backfill were made faster and
// matched after; they were retaken when the workload's path, which the
// report names, was left out, and the code before the speed-up gives the
// same ones.)
func TestSWFBackfillTraceDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 20,000 jobs")
	}
	w := repeatJobs(loadSWFPrefix(t, "KTH-SP2-1996-2.1-cln.swf.gz", 0), 20_000)
	// The report names the workload by the path it was read from, which
	// depends on where the checkout is: the digest must not.
	w.Name = "KTH-SP2"

	want := map[sched.Policy]string{
		sched.HMRF: "f86be245faf3521ea57cad514cd1878b704ad0bf852dada8c51505afb9240f90",
		sched.DRF:  "edae64d702b5ee271dff0d0ef32d9756f8d132327e1a7bb61eaa299ba7bcf338",
	}
	for _, p := range []sched.Policy{sched.HMRF, sched.DRF} {
		s := sched.DefaultSettings()
		s.Policy, s.Backfill = p, sched.BackfillEASY
		h := sha256.New()
		res, err := Run(w, Config{Settings: s, Trace: func(e TraceEvent) {
			fmt.Fprintf(h, "%d %d %d %d %v %d\n", e.Kind, e.Time, e.Job, e.Node, e.Nodes, e.Tasks)
		}})
		if err != nil {
			t.Fatal(err)
		}
		var report bytes.Buffer
		if err := WriteJSON(&report, []*Result{res}); err != nil {
			t.Fatal(err)
		}
		h.Write(report.Bytes())
		fmt.Fprintf(h, "passes %d placements %d events %d\n", res.Passes, res.Placements, res.Events)
		if got := fmt.Sprintf("%x", h.Sum(nil)); got != want[p] {
			t.Errorf("%s: replay digest %s, want %s", p, got, want[p])
		}
	}
}
