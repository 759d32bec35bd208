package sched

// The policies whose ranking depends on more than an account's fairness
// state (qknobler's per-account knob limit, bpf's queue classes) run their
// own progressive filling with the helpers below. They keep the engine's
// rules: an account's jobs are served in queue order (passing over jobs no
// up node can hold), an account whose next task fits nowhere leaves the
// pass, and a starving account goes first.

// head is account a's next pending job in this pass.
func (e *Engine) head(v *View, a int) *Job {
	return &v.Accounts[a].Queue[e.cursor[a].job]
}

// placeNext places account a's next task on the nodes claim took for it
// and moves its cursor on. It reports whether the account still has a task
// pending; when it has none it has left the heap.
func (e *Engine) placeNext(v *View, a int) bool {
	acct := &v.Accounts[a]
	cur := &e.cursor[a]
	job := &acct.Queue[cur.job]
	e.record(a, cur.job, job.FirstIndex+cur.placed)
	f := &e.fair[a]
	f.running.Add(job.Demand)
	f.usage.AddScaled(job.Demand, v.Settings.Quantum.Seconds())
	if cur.placed++; cur.placed == job.Pending {
		cur.job, cur.placed = nextJob(acct.Queue, cur.job+1, &e.fleet), 0
		if cur.job == len(acct.Queue) {
			e.heap.remove(a)
			return false
		}
	}
	return true
}

// rekey replaces the keys prepare gave the candidates with the pass's own,
// except for starving accounts, which stay first until they are served.
func (e *Engine) rekey(key func(a int) rankKey) {
	e.members = append(e.members[:0], e.heap.items...)
	for _, a := range e.members {
		if e.heap.keys[a].class == classStarving {
			continue
		}
		k := key(a)
		k.account = a
		e.heap.update(a, k)
	}
}

// fillByKey is the engine's progressive filling ranked by key instead of
// Policy.key: the first-ranked account whose next task fits somewhere gets it
// placed on the node the placement strategy picks, until nothing fits.
// placed, when not nil, is told each placement's account and job before the
// account is ranked again.
func (e *Engine) fillByKey(v *View, key func(a int) rankKey, placed func(a int, job *Job)) {
	e.rekey(key)
	for e.heap.len() > 0 {
		a := e.heap.top()
		job := e.head(v, a)
		if !e.claim(a, job) {
			e.heap.remove(a)
			continue
		}
		more := e.placeNext(v, a)
		if placed != nil {
			placed(a, job)
		}
		if more {
			k := key(a)
			k.account = a
			e.heap.update(a, k)
		}
	}
}
