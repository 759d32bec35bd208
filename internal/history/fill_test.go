package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/fsm"
)

// A small history fills an FSM with what the spec asks: every attempt
// ended and charged once in the journal, the jobs listed, the ledger
// verified — and the same spec gives the same state.
func TestFillMakesTheHistoryAsked(t *testing.T) {
	spec := CentreYear(2_050)
	spec.Accounts, spec.Nodes = 5, 10
	var heads [2]string
	for i := range heads {
		f, err := fsm.Open(fsm.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		_, err = Fill(context.Background(), f, spec)
		if err != nil {
			t.Fatal(err)
		}
		jobs, _, err := f.Jobs(fsm.JobFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		wantJobs := (spec.Attempts + spec.TasksPerJob - 1) / spec.TasksPerJob
		ended := int64(0)
		for _, j := range jobs {
			ended += j.Succeeded + j.Failed
			if !j.State.Ended() {
				t.Fatalf("job %d is %v after the history: every job ends", j.ID, j.State)
			}
		}
		if len(jobs) != wantJobs || ended != int64(spec.Attempts) {
			t.Fatalf("the history holds %d jobs with %d ended attempts; want %d jobs, %d attempts", len(jobs), ended, wantJobs, spec.Attempts)
		}
		report, err := f.Verify()
		if err != nil {
			t.Fatalf("the history's ledger does not verify: %v", err)
		}
		// A hold, a charge per attempt and a release per job at least.
		if report.Entries < spec.Attempts {
			t.Fatalf("the journal holds %d entries for %d attempts", report.Entries, spec.Attempts)
		}
		heads[i] = fmt.Sprintf("%d %x", report.LastSeq, report.Head)
	}
	if heads[0] != heads[1] {
		t.Fatalf("the same spec gave two different journals: heads %s and %s", heads[0], heads[1])
	}
}

// The history's pages are nearly full: the buckets that grow with every
// attempt (the SU journal, the attempts, the index of ended attempts) use
// at least four fifths of the pages they take, so the state file, its
// snapshots and a restore cost what the records hold, not twice that as
// with bbolt's default half-full splits.
func TestHistoryPagesAreFilled(t *testing.T) {
	dir := t.TempDir()
	f, err := fsm.Open(fsm.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spec := CentreYear(20_000)
	spec.Nodes = 50
	if _, err := Fill(context.Background(), f, spec); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, fsm.FileName), 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for _, name := range []string{"journal", "tasks", "tasks_ended"} {
			b := tx.Bucket([]byte(name))
			if b == nil {
				return fmt.Errorf("no bucket %s", name)
			}
			s := b.Stats()
			if s.KeyN < spec.Attempts {
				return fmt.Errorf("bucket %s holds %d records for %d attempts", name, s.KeyN, spec.Attempts)
			}
			if fill := float64(s.LeafInuse) / float64(s.LeafAlloc); fill < 0.8 {
				return fmt.Errorf("bucket %s uses %.0f%% of its %d leaf pages (%d of %d bytes)", name, 100*fill, s.LeafPageN, s.LeafInuse, s.LeafAlloc)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
