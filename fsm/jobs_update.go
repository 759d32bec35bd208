package fsm

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Updating a job (Slurm's scontrol update): its name, a lower walltime,
// its dependency, its array throttle, its nice and (for admins) its
// priority, while it has not
// ended. A lower walltime applies to the tasks placed after it; those
// already placed were sent the old one and keep it as their limit, for
// their charge and for backfill (attemptRecord.Walltime). It cannot be raised,
// since the SU hold was priced on it. A new dependency is checked as at
// submission, and refused when it would close a cycle.

// UpdateJob changes the fields it sets of a job that has not ended.
type UpdateJob struct {
	JobID      uint64         `json:"job_id"`
	Name       *string        `json:"name,omitempty"`
	Walltime   *time.Duration `json:"walltime,omitempty"`
	Dependency *string        `json:"dependency,omitempty"`
	Throttle   *int           `json:"throttle,omitempty"`
	Nice       *int           `json:"nice,omitempty"`
	// Priority is an admin's boost (jobs_terms.go); the servers refuse it
	// from anyone else.
	Priority *int `json:"priority,omitempty"`
	// DependencyViewer limits the jobs Dependency may name, as
	// SubmitJob's does.
	DependencyViewer string `json:"dependency_viewer,omitempty"`

	// boundsPlaced marks an entry logged before version 4, when a lower
	// walltime also bounded the charge of the tasks already placed: it
	// replays so (markVersion).
	boundsPlaced bool
}

func (*UpdateJob) Type() CommandType { return TypeUpdateJob }

func (c *UpdateJob) validate(r rules) *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	if c.Name == nil && c.Walltime == nil && c.Dependency == nil && c.Throttle == nil && c.Nice == nil && c.Priority == nil {
		return invalid("nothing to update: give a name, walltime, dependency, throttle, nice or priority")
	}
	if c.Priority != nil && (*c.Priority < 0 || *c.Priority > MaxPriority) {
		return invalid("priority is %d: give 0 (no boost) to %d", *c.Priority, MaxPriority)
	}
	if c.Name != nil {
		if err := r.text("job name", *c.Name, MaxJobNameBytes); err != nil {
			return err
		}
	}
	if c.Walltime != nil && *c.Walltime <= 0 {
		return invalid("walltime %v: give a positive duration", *c.Walltime)
	}
	if c.Throttle != nil && *c.Throttle < 0 {
		return invalid("array throttle is %d: give how many tasks may run at once, or 0 for no limit", *c.Throttle)
	}
	if c.Nice != nil && (*c.Nice < -MaxNice || *c.Nice > MaxNice) {
		return invalid("nice is %d: give %d to %d", *c.Nice, -MaxNice, MaxNice)
	}
	if c.Dependency != nil {
		if _, err := parseDependency(*c.Dependency); err != nil {
			return err
		}
	}
	if c.DependencyViewer != "" {
		if err := checkName("dependency viewer", c.DependencyViewer); err != nil {
			return err
		}
	}
	return nil
}

// updateJob applies UpdateJob; the result is a JobInfo.
func (b *batch) updateJob(c *UpdateJob) (any, error) {
	st := b.st
	j, ok := st.jobs[c.JobID]
	if !ok {
		if _, err := b.job(c.JobID); err != nil {
			return nil, err
		}
		return nil, refuse(KindPrecondition, "job %d has ended: there is nothing to update", c.JobID)
	}
	if c.Walltime != nil && *c.Walltime > j.Walltime {
		return nil, refuse(KindPrecondition, "walltime %v is longer than the job's %v: a walltime can only be lowered, as the SU hold was priced on it; submit a new job for more", *c.Walltime, j.Walltime)
	}
	var dep *dependency
	if c.Dependency != nil {
		var refusal *Error
		if dep, refusal = parseDependency(*c.Dependency); refusal == nil {
			refusal = b.checkDependency(dep, c.DependencyViewer)
		}
		if refusal != nil {
			return nil, refusal
		}
		if why := dep.never(); why != "" {
			return nil, refuse(KindPrecondition, "the job would never start: %s; give another dependency", why)
		}
		if cycle := st.dependencyCycle(j.ID, dep); cycle != "" {
			return nil, refuse(KindPrecondition, "dependency %s would make a cycle (%s): a job cannot wait for itself", dep.Text, cycle)
		}
	}
	if c.Name != nil {
		j.Name = *c.Name
	}
	if c.Walltime != nil {
		if *c.Walltime < j.Walltime {
			if err := b.lowerWalltime(j, *c.Walltime, !c.boundsPlaced); err != nil {
				return nil, err
			}
		}
	}
	if c.Throttle != nil {
		j.Throttle = *c.Throttle
	}
	if c.Nice != nil {
		j.Nice = *c.Nice
	}
	if c.Priority != nil {
		j.Priority = *c.Priority
	}
	if c.Dependency != nil {
		j.Dep = dep
		for ref, ids := range st.dependents {
			st.dependents[ref] = slices.DeleteFunc(ids, func(id uint64) bool { return id == j.ID })
		}
		st.noteDependents(j)
	}
	b.markJob(j)
	b.touched[j.Account] = true
	return st.jobInfo(j), nil
}

// lowerWalltime gives job j walltime w. Its placed tasks were sent the
// old one and keep it as their limit when keep: they run to it, so they
// are charged and foreseen for it. A queued one is also taken back, to be
// placed again with w; its worker may have started it already, and then
// it runs, and is charged, until its stop reaches it.
func (b *batch) lowerWalltime(j *jobRecord, w time.Duration, keep bool) error {
	old := j.Walltime
	j.Walltime = w
	return b.changeAttempts(j, func(a *attemptRecord) bool {
		changed := takeBack(a)
		if keep && a.Walltime == 0 {
			a.Walltime, changed = old, true
		}
		return changed
	})
}

// dependencyCycle reports the chain by which job id would wait for
// itself with dependency dep ("" when it would not), following the
// active jobs' dependencies.
func (s *state) dependencyCycle(id uint64, dep *dependency) string {
	if dep == nil {
		return ""
	}
	type step struct {
		job  uint64
		path []uint64
	}
	var work []step
	for _, t := range dep.Terms {
		if t.Kind != "singleton" {
			work = append(work, step{t.Job, []uint64{id, t.Job}})
		}
	}
	seen := map[uint64]bool{}
	for len(work) > 0 {
		w := work[0]
		work = work[1:]
		if w.job == id {
			parts := make([]string, len(w.path))
			for i, p := range w.path {
				parts[i] = "job " + strconv.FormatUint(p, 10)
			}
			return strings.Join(parts, " waits for ")
		}
		if seen[w.job] {
			continue
		}
		seen[w.job] = true
		j, ok := s.jobs[w.job]
		if !ok || j.Dep == nil {
			continue
		}
		for _, t := range j.Dep.Terms {
			if t.Kind != "singleton" && !t.Met && !t.Never {
				work = append(work, step{t.Job, append(slices.Clone(w.path), t.Job)})
			}
		}
	}
	return ""
}
