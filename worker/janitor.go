package worker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The janitor. Output files stay after an attempt ends so `longfair logs`
// can read them, and a working directory the task left files in stays too;
// without pruning a busy node's disk fills with them (a 10,000-task array
// leaves 20,000 files). So every so often the agent removes the output and
// working directories of attempts it no longer holds that have not been
// written for the retention time. Names it did not make are left alone.

// DefaultOutputRetention is how long ended attempts' output is kept.
const DefaultOutputRetention = 7 * 24 * time.Hour

// pruneEvery is how often the janitor looks: a quarter of the retention, so
// files outlive it by at most a quarter, and between a second and an hour.
func pruneEvery(retention time.Duration) time.Duration {
	return min(max(retention/4, time.Second), time.Hour)
}

// pruneLoop prunes the work dir until ctx ends; retention 0 keeps
// everything.
func (ag *Agent) pruneLoop(ctx context.Context) {
	retention := ag.cfg.OutputRetention
	if retention <= 0 {
		return
	}
	tick := time.NewTicker(pruneEvery(retention))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			removed, err := prune(ag.cfg.WorkDir, now, retention, ag.tasks)
			if err != nil {
				ag.log.Warn("pruning old task output", "error", err, "removed", removed)
			} else if removed > 0 {
				ag.log.Info("pruned old task output", "removed", removed, "retention", retention)
			}
		}
	}
}

// holder says which attempts the agent holds (table).
type holder interface {
	holds(attemptKey) bool
	holdsJob(job uint64) bool
}

// prune removes, under workDir, the output files and working directories of
// attempts the agent does not hold that nothing has written to since
// now-retention, then the job output directories left empty (unless the
// agent holds an attempt of that job, which may be about to write there). It
// returns how many files and directories it removed.
func prune(workDir string, now time.Time, retention time.Duration, held holder) (int, error) {
	cutoff := now.Add(-retention)
	removed := 0
	var errs []error
	stale := func(path string, k attemptKey, ok bool) bool {
		if !ok || held.holds(k) {
			return false
		}
		info, err := os.Lstat(path)
		return err == nil && info.ModTime().Before(cutoff)
	}
	remove := func(path string, all bool) {
		var err error
		if all {
			err = os.RemoveAll(path)
		} else {
			err = os.Remove(path)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			return
		}
		removed++
	}

	jobs, err := readDir(filepath.Join(workDir, "output"))
	errs = append(errs, err)
	for _, j := range jobs {
		job, err := strconv.ParseUint(j.Name(), 10, 64)
		if err != nil || !j.IsDir() {
			continue
		}
		dir := outputDir(workDir, job)
		files, err := readDir(dir)
		errs = append(errs, err)
		left := len(files)
		for _, f := range files {
			k, ok := parseOutputName(job, f.Name())
			if path := filepath.Join(dir, f.Name()); stale(path, k, ok) {
				remove(path, false)
				left--
			}
		}
		if left == 0 && !held.holdsJob(job) {
			remove(dir, false)
		}
	}

	tasks, err := readDir(filepath.Join(workDir, "tasks"))
	errs = append(errs, err)
	for _, d := range tasks {
		k, ok := parseTaskDirName(d.Name())
		if path := filepath.Join(workDir, "tasks", d.Name()); d.IsDir() && stale(path, k, ok) {
			remove(path, true)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("prune %s: %w", workDir, err)
	}
	return removed, nil
}

// readDir lists dir; a directory that does not exist (yet) is empty.
func readDir(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

// parseOutputName reads TASK.ATTEMPT.stdout or .stderr (outputPath).
func parseOutputName(job uint64, name string) (attemptKey, bool) {
	base, ok := strings.CutSuffix(name, ".stdout")
	if !ok {
		if base, ok = strings.CutSuffix(name, ".stderr"); !ok {
			return attemptKey{}, false
		}
	}
	task, attempt, ok := strings.Cut(base, ".")
	if !ok {
		return attemptKey{}, false
	}
	t, err1 := strconv.ParseInt(task, 10, 64)
	a, err2 := strconv.ParseInt(attempt, 10, 32)
	return attemptKey{job, t, int32(a)}, err1 == nil && err2 == nil
}

// parseTaskDirName reads JOB.TASK.ATTEMPT (taskDir).
func parseTaskDirName(name string) (attemptKey, bool) {
	job, rest, ok := strings.Cut(name, ".")
	if !ok {
		return attemptKey{}, false
	}
	j, err := strconv.ParseUint(job, 10, 64)
	if err != nil {
		return attemptKey{}, false
	}
	return parseOutputName(j, rest+".stdout")
}
