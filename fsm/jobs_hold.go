package fsm

// Holding jobs (Slurm's scontrol hold and release, sbatch --hold). A held
// job keeps its place and its SU hold but starts no task: the scheduler's
// view leaves it out and the FSM drops a placement of it (heldBack,
// jobs_terms.go). Tasks already running go on; tasks waiting in a
// look-ahead queue (lookahead.go), which would start on their own, are
// taken back as a RequeueJob takes back running ones: marked, stopped by
// the leader, and queued again once their worker says so. Holding a held
// job, or releasing one that is not, changes nothing and answers the job.

// HoldJob holds (Hold) or releases a job that has not ended.
type HoldJob struct {
	JobID uint64 `json:"job_id"`
	Hold  bool   `json:"hold"`
}

func (*HoldJob) Type() CommandType { return TypeHoldJob }

func (c *HoldJob) validate(rules) *Error {
	if c.JobID == 0 {
		return invalid("job id is 0: give the id SubmitJob returned")
	}
	return nil
}

// holdJob applies HoldJob; the result is a JobInfo.
func (b *batch) holdJob(c *HoldJob) (any, error) {
	j, err := b.job(c.JobID)
	if err != nil {
		return nil, err
	}
	if j.State.Ended() {
		verb := map[bool]string{true: "hold", false: "release"}[c.Hold]
		return nil, refuse(KindPrecondition, "job %d already %s at %s: there is nothing to %s", j.ID, j.State, formatTime(j.EndedAt), verb)
	}
	if j.Held != c.Hold {
		j.Held = c.Hold
		b.markJob(j)
		b.touched[j.Account] = true
	}
	if c.Hold && j.Queued > 0 {
		if err := b.takeBackQueued(j); err != nil {
			return nil, err
		}
	}
	return b.st.jobInfo(j), nil
}
