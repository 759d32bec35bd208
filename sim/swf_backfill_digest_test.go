package sim

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/longfair/longfair/sched"
)

// TestSWFBackfillTraceDigest pins a 20,000-job EASY-backfill replay of the
// KTH-SP2 log (the shape BenchmarkSWFBackfill1M replays) to digests taken
// before the replay and the engine's backfill were made faster: every
// trace event, the JSON report and the pass count must stay what they
// were, so a speed-up that changes any outcome fails here.
func TestSWFBackfillTraceDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 20,000 jobs")
	}
	w := repeatJobs(loadSWFPrefix(t, "KTH-SP2-1996-2.1-cln.swf.gz", 0), 20_000)
	want := map[sched.Policy]string{
		sched.HMRF: "86c6fe045835548ae8dd6035e3b70e54c7c2dd027d56ee510687737eb72594eb",
		sched.DRF:  "d8707779e7e5ed329b080bddf4e022010c3d9507c155b653e29ca8f7c6a7a015",
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
