package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Layout of the work dir:
//
//	output/JOB/TASK.ATTEMPT.stdout   what the attempt wrote to stdout
//	output/JOB/TASK.ATTEMPT.stderr   … and to stderr
//	tasks/JOB.TASK.ATTEMPT/          its working directory while it runs
//
// Output stays after the attempt ends, for `longfair logs`; a working
// directory is removed when the attempt ends if the task left it empty.

func outputDir(workDir string, job uint64) string {
	return filepath.Join(workDir, "output", strconv.FormatUint(job, 10))
}

func outputPath(workDir string, k attemptKey, stream longfairv1.OutputStream) string {
	ext := "stdout"
	if stream == longfairv1.OutputStream_OUTPUT_STREAM_STDERR {
		ext = "stderr"
	}
	return filepath.Join(outputDir(workDir, k.job), fmt.Sprintf("%d.%d.%s", k.task, k.attempt, ext))
}

func taskDir(workDir string, k attemptKey) string {
	return filepath.Join(workDir, "tasks", fmt.Sprintf("%d.%d.%d", k.job, k.task, k.attempt))
}

// latestAttempt finds the highest attempt of a task with output here.
func latestAttempt(workDir string, job uint64, task int64) (int32, error) {
	entries, err := os.ReadDir(outputDir(workDir, job))
	if err != nil {
		return 0, err
	}
	prefix := strconv.FormatInt(task, 10) + "."
	best := int32(0)
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		num, _, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(num, 10, 32); err == nil && int32(n) > best {
			best = int32(n)
		}
	}
	if best == 0 {
		return 0, os.ErrNotExist
	}
	return best, nil
}
