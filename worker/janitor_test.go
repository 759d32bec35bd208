package worker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// heldSet is a holder over a fixed set of attempts.
type heldSet map[attemptKey]bool

func (h heldSet) holds(k attemptKey) bool { return h[k] }

func (h heldSet) holdsJob(job uint64) bool {
	for k := range h {
		if k.job == job {
			return true
		}
	}
	return false
}

// touch creates path (a file, or a directory with a file in it when dir is
// set) last written at mtime.
func touch(t *testing.T, path string, mtime time.Time, dir bool) {
	t.Helper()
	file := path
	if dir {
		file = filepath.Join(path, "result.dat")
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, path} {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// left lists what is under root, relative to it.
func left(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, path); rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPruneRemovesOnlyOldOutputOfAttemptsNoLongerHeld(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	const retention = 24 * time.Hour
	old, recent := now.Add(-retention-time.Minute), now.Add(-retention+time.Minute)

	done := attemptKey{job: 7, task: 3, attempt: 1}    // ended long ago: goes
	fresh := attemptKey{job: 7, task: 4, attempt: 1}   // ended lately: stays
	running := attemptKey{job: 8, task: 0, attempt: 2} // held, silent for long: stays
	gone := attemptKey{job: 9, task: 1, attempt: 1}    // its job's directory empties: goes
	for _, k := range []attemptKey{done, fresh, running, gone} {
		at := old
		if k == fresh {
			at = recent
		}
		touch(t, outputPath(root, k, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT), at, false)
		touch(t, outputPath(root, k, longfairv1.OutputStream_OUTPUT_STREAM_STDERR), at, false)
		touch(t, taskDir(root, k), at, true)
	}
	// Names the worker did not make stay, however old.
	touch(t, filepath.Join(root, "output", "notes.txt"), old, false)
	touch(t, filepath.Join(outputDir(root, 7), "README"), old, false)
	touch(t, filepath.Join(root, "tasks", "scratch"), old, true)

	removed, err := prune(root, now, retention, heldSet{running: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"output", "output/7", "output/7/4.1.stderr", "output/7/4.1.stdout", "output/7/README",
		"output/8", "output/8/0.2.stderr", "output/8/0.2.stdout", "output/notes.txt",
		"tasks", "tasks/7.4.1", "tasks/7.4.1/result.dat", "tasks/8.0.2", "tasks/8.0.2/result.dat",
		"tasks/scratch", "tasks/scratch/result.dat",
	}
	if got := left(t, root); !slices.Equal(got, want) {
		t.Errorf("after pruning:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	// done's and gone's two files and working directory each, and job 9's
	// output directory.
	if removed != 7 {
		t.Errorf("prune says it removed %d entries, want 7", removed)
	}

	// Once the running attempt is no longer held, it goes too.
	if _, err := prune(root, now, retention, heldSet{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range left(t, root) {
		if strings.Contains(p, "8") {
			t.Errorf("%s is left after its attempt was released", p)
		}
	}
}

func TestPruneOnAnEmptyWorkDir(t *testing.T) {
	removed, err := prune(t.TempDir(), time.Now(), time.Hour, heldSet{})
	if err != nil || removed != 0 {
		t.Fatalf("prune of an empty work dir: removed %d, err %v", removed, err)
	}
}

func TestOutputRetentionMustNotBeNegative(t *testing.T) {
	cfg := DefaultConfig()
	cfg.NodeID, cfg.Join, cfg.WorkDir = "w1", []string{"127.0.0.1:7412"}, t.TempDir()
	if cfg.OutputRetention != DefaultOutputRetention {
		t.Fatalf("default retention %v, want %v", cfg.OutputRetention, DefaultOutputRetention)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.OutputRetention = -time.Hour
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "output retention") {
		t.Fatalf("a negative retention gave %v, want an error naming it", err)
	}
}

// The agent's janitor removes a finished attempt's output once the leader
// has acknowledged its end and the retention has passed, and not before.
func TestAgentPrunesOutputAfterRetention(t *testing.T) {
	const retention = time.Second
	ag := newTestAgent(t, func(c *Config) { c.OutputRetention = retention })
	go ag.pruneLoop(ag.runCtx)
	ag.assign(asg(5, 0, 1, "echo result", time.Minute, map[string]float64{"cpu": 1}))
	waitEvent(t, ag, 5, 0, 1, exited)
	stdout := outputPath(ag.cfg.WorkDir, attemptKey{5, 0, 1}, longfairv1.OutputStream_OUTPUT_STREAM_STDOUT)

	// Unacknowledged, the attempt is held: its output stays past the
	// retention.
	time.Sleep(retention + pruneEvery(retention) + 200*time.Millisecond)
	if _, err := os.Stat(stdout); err != nil {
		t.Fatalf("output of an attempt whose end the leader has not acknowledged is gone: %v", err)
	}
	events := ag.tasks.eventsAfter(0)
	ag.tasks.ack(events[len(events)-1].GetSeq())
	deadline := time.Now().Add(retention + 3*pruneEvery(retention) + 2*time.Second)
	for {
		if _, err := os.Stat(outputDir(ag.cfg.WorkDir, 5)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the output of job 5 is still there %v after its end was acknowledged", retention+3*pruneEvery(retention)+2*time.Second)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
