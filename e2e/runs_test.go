package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// run is one line a task appended to the shared run log when it ended.
type taskRun struct {
	task       string // JOB.INDEX
	attempt    int
	node       string
	devices    []string
	start, end int64 // unix nanoseconds
}

// recordScript is shell text that sleeps for the given time and appends
// one line about itself to path. A line is written with one short append,
// which the kernel does atomically, so concurrent tasks never mix lines.
func recordScript(path string, sleep string) string {
	return fmt.Sprintf(`s=$(date +%%s%%N); sleep %s; echo "$LONGFAIR_TASK_ID $LONGFAIR_ATTEMPT $LONGFAIR_NODE_ID ${OFFLOAD_DEVICES:-none} $s $(date +%%s%%N)" >> %s`, sleep, path)
}

func readRuns(t testing.TB, path string) []taskRun {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []taskRun
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("run log line %q is not what the tasks write", line)
		}
		attempt, _ := strconv.Atoi(f[1])
		start, _ := strconv.ParseInt(f[4], 10, 64)
		end, _ := strconv.ParseInt(f[5], 10, 64)
		r := taskRun{task: f[0], attempt: attempt, node: f[2], start: start, end: end}
		if f[3] != "none" {
			r.devices = strings.Split(f[3], ",")
		}
		out = append(out, r)
	}
	return out
}

// runsByTask groups runs by task id.
func runsByTask(runs []taskRun) map[string][]taskRun {
	m := map[string][]taskRun{}
	for _, r := range runs {
		m[r.task] = append(m[r.task], r)
	}
	return m
}
