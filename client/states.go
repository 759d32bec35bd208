package client

import (
	"fmt"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// StateName is a job state in lower case without its prefix: "pending",
// "running", "succeeded", "failed" or "cancelled".
func StateName(s longfairv1.JobState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "JOB_STATE_"))
}

// TaskStateName is a task state in lower case without its prefix.
func TaskStateName(s longfairv1.TaskState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "TASK_STATE_"))
}

// ParseJobState reads a job state by its short name ("pending") or its
// full one ("JOB_STATE_PENDING"), in any case.
func ParseJobState(s string) (longfairv1.JobState, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(name, "JOB_STATE_") {
		name = "JOB_STATE_" + name
	}
	v, ok := longfairv1.JobState_value[name]
	if !ok || v == 0 {
		return 0, fmt.Errorf("job state %q: use pending, running, succeeded, failed or cancelled", s)
	}
	return longfairv1.JobState(v), nil
}
