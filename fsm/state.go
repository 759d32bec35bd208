package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"runtime/debug"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// taskID names a task of a job array. A task has at most one active attempt.
type taskID struct {
	job  uint64
	task int64
}

// nodeState is a node with what its active attempts leave free.
type nodeState struct {
	rec  nodeRecord
	free ledger.Vector
	// queued is what the attempts waiting in the node's look-ahead queue
	// will take when they start (nil: none). It is room claimed: ordinary
	// placements see free less queued (room), and the queue holds at most
	// one node's worth (queueRoom).
	queued ledger.Vector
	tasks  map[taskID]struct{}
	// history is its last ups and downs (nodes_history.go).
	history []NodeTransition
}

// state is the in-memory mirror of the bbolt file that applies and reads
// use: everything small or hot. Jobs that have ended and finished attempts
// live only in bbolt.
type state struct {
	applied, term uint64
	now           ledger.Time
	// historyLast is the start of the step each tier of the fairness
	// history last sampled (history.go).
	historyLast [len(historyTiers)]ledger.Time
	nextJob     uint64
	nextGrant   uint64

	settings settingsRecord
	window   ledger.Window
	// units are the resources' units, indexed like vectors (resourceUnits).
	units []ledger.Unit

	accounts     map[string]*accountRecord
	accountNames []string // sorted
	users        map[string]*userRecord
	nodes        map[string]*nodeState
	// shapes are the largest shapes of the known nodes (jobs_fit.go),
	// computed when first needed: whatever changes a node's capacity or
	// adds a node sets it to nil.
	shapes ledger.Shapes

	jobs        map[uint64]*jobRecord // jobs that have not ended
	accountJobs map[string][]uint64   // their ids per account, ascending
	// dependents lists, by job id, the active jobs whose dependency
	// names it (jobs_deps.go); rebuilt from the active jobs on load.
	dependents map[uint64][]uint64
	// runningJobs are, per account, the ids of the jobs with placed tasks,
	// ascending: the baseline counts them first.
	runningJobs map[string][]uint64
	running     map[taskID]*attemptRecord
	// jobTotals caches each account's sums over its active jobs for the
	// fairness report (view.go), which reads them for every account on
	// every request: a walk of 100,000 jobs took most of its time. Derived
	// and never stored; an applied command that changes an account's jobs
	// drops its entry (refreshBaselines).
	jobTotals *jobTotalsCache

	su   *ledger.SUBook
	fair *ledger.FairnessBook
	// weights are the accounts' effective weights, capacity the summed
	// capacity of the up nodes; recomputeWeights refreshes both.
	weights     map[string]float64
	weightFrom  map[string]WeightSource
	totalWeight float64
	capacity    ledger.Vector
	// baseRates are the baseline rates last given to the fairness book.
	baseRates map[string]ledger.Vector
	// fairSaved is the fairness book as last written to bbolt, key by key,
	// so that a batch rewrites only the accounts it changed.
	fairSaved map[string][]byte

	// acl is the API tokens (tokens.go).
	acl aclState

	// groups, queues and shares are the account tree, the latency queues
	// and the FAWKES partitions (groups.go, queues.go,
	// shares.go).
	groups groupState
	queues queueState
	shares shareState
}

func newState() *state {
	return &state{
		settings:    defaultSettings(),
		window:      ledger.Window{Kind: ledger.WindowNone},
		accounts:    make(map[string]*accountRecord),
		users:       make(map[string]*userRecord),
		nodes:       make(map[string]*nodeState),
		jobs:        make(map[uint64]*jobRecord),
		accountJobs: make(map[string][]uint64),
		dependents:  make(map[uint64][]uint64),
		runningJobs: make(map[string][]uint64),
		running:     make(map[taskID]*attemptRecord),
		jobTotals:   &jobTotalsCache{m: make(map[string]jobTotals)},
		su:          ledger.NewSUBook(),
		fair:        ledger.NewFairnessBook(ledger.Window{Kind: ledger.WindowNone}, len(defaultResources)),
		fairSaved:   make(map[string][]byte),
		weights:     make(map[string]float64),
		weightFrom:  make(map[string]WeightSource),
		baseRates:   make(map[string]ledger.Vector),
		groups:      groupState{byPath: make(map[string]*groupRecord)},
		queues:      queueState{byAccount: make(map[string]*queueRecord), dirty: make(map[string]bool)},
	}
}

// pad extends v with zeros to n entries: vectors written before a resource
// was added are shorter than the resource list.
func pad(v ledger.Vector, n int) ledger.Vector {
	if len(v) >= n {
		return v
	}
	return append(v, make(ledger.Vector, n-len(v))...)
}

// resourceUnits returns the units of the cluster's resources. Resources are
// only ever appended, so the cached list is stale exactly when it is
// shorter than the resource list.
func (s *state) resourceUnits() []ledger.Unit {
	if len(s.units) != len(s.settings.Resources) {
		s.units = ledger.UnitsOf(s.settings.Resources)
	}
	return s.units
}

// take and give move an attempt's demand out of and back into a node's
// free vector in whole units, so that it never drifts with float residue
// (ledger.AddUnits): a node fills exactly, and every replica, restarted or
// not, holds the same bits.
func (s *state) take(nd *nodeState, demand ledger.Vector) {
	ledger.AddUnits(nd.free, demand, s.resourceUnits(), -1)
}

func (s *state) give(nd *nodeState, demand ledger.Vector) {
	ledger.AddUnits(nd.free, demand, s.resourceUnits(), +1)
}

// hold puts active attempt a on node nd: a queued attempt claims room in
// the node's look-ahead queue, any other takes the node's free resources.
// release undoes it, for a in the same state.
func (s *state) hold(nd *nodeState, a *attemptRecord) {
	if a.State != TaskQueued {
		s.take(nd, a.nodeDemand())
		return
	}
	if nd.queued == nil {
		nd.queued = ledger.NewVector(len(nd.free))
	}
	ledger.AddUnits(nd.queued, a.nodeDemand(), s.resourceUnits(), +1)
}

func (s *state) release(nd *nodeState, a *attemptRecord) {
	if a.State != TaskQueued {
		s.give(nd, a.nodeDemand())
		return
	}
	if nd.queued != nil {
		ledger.AddUnits(nd.queued, a.nodeDemand(), s.resourceUnits(), -1)
	}
}

// room is what an ordinary placement may take on nd: its free resources
// less what its queue has claimed. Not clamped at zero: a node without a
// queue (nil) and one whose queue has emptied (zeros) must give the same
// answer, on a replica that restarted (which rebuilds nil) as on one that
// did not, for a placement that asks none of a resource gone negative.
func room(nd *nodeState) ledger.Vector {
	return less(nd.free, nd.queued)
}

// queueRoom is what nd's look-ahead queue may still take: one node's
// worth (its capacity) less what it holds.
func queueRoom(nd *nodeState) ledger.Vector {
	return less(nd.rec.Capacity, nd.queued)
}

// less is v − w; v itself when w is nil.
func less(v, w ledger.Vector) ledger.Vector {
	if w == nil {
		return v
	}
	out := v.Clone()
	for k := range out {
		if k < len(w) {
			out[k] -= w[k]
		}
	}
	return out
}

// loadState reads the whole in-memory state from a bbolt transaction.
func loadState(tx *bolt.Tx) (*state, error) {
	s := newState()
	meta := tx.Bucket(bucketMeta)
	if v := meta.Get(keySchema); v != nil && readU64(v) != schemaVersion {
		return nil, fmt.Errorf("the state file has schema version %d but this server reads version %d: run the release that wrote it, or restore a snapshot", readU64(v), schemaVersion)
	}
	if v := meta.Get(keyApplied); len(v) == 16 {
		s.applied, s.term = readU64(v[:8]), readU64(v[8:])
	}
	s.now = ledger.Time(readU64(meta.Get(keyTime)))
	s.nextJob = readU64(meta.Get(keyNextJob))
	s.nextGrant = readU64(meta.Get(keyNextGrant))
	s.loadHistory(tx)

	// A stored record replaces the defaults whole: a field it lacks, as
	// billing_rule in records older than billing rules, reads as its zero
	// value (BillingSum), not as a new cluster's default.
	var settings settingsRecord
	if ok, err := getJSON(tx.Bucket(bucketSettings), keySettings, &settings); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	} else if ok {
		s.settings = settings
	}
	n := len(s.settings.Resources)
	s.settings.BillingWeights = ledger.BillingWeights(pad(ledger.Vector(s.settings.BillingWeights), n))
	w, err := ledger.ParseWindow(s.settings.Window)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	s.window = w

	if err := forEachJSON(tx.Bucket(bucketAccounts), func(_ []byte, a *accountRecord) {
		s.accounts[a.Name] = a
		s.accountNames = append(s.accountNames, a.Name)
	}); err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	if err := forEachJSON(tx.Bucket(bucketUsers), func(_ []byte, u *userRecord) { s.users[u.Name] = u }); err != nil {
		return nil, fmt.Errorf("users: %w", err)
	}
	if err := forEachJSON(tx.Bucket(bucketNodes), func(_ []byte, r *nodeRecord) {
		r.Capacity = pad(r.Capacity, n)
		s.nodes[r.ID] = &nodeState{rec: *r, free: r.Capacity.Clone(), tasks: make(map[taskID]struct{})}
	}); err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	s.loadNodeHistory(tx)
	if err := s.loadActive(tx, n); err != nil {
		return nil, err
	}
	if err := s.acl.load(tx); err != nil {
		return nil, err
	}
	if err := s.groups.load(tx); err != nil {
		return nil, fmt.Errorf("account groups: %w", err)
	}
	if err := s.queues.load(tx); err != nil {
		return nil, fmt.Errorf("latency queues: %w", err)
	}
	if err := s.shares.load(tx); err != nil {
		return nil, fmt.Errorf("fawkes shares: %w", err)
	}
	if err := s.loadBooks(tx); err != nil {
		return nil, err
	}
	for _, name := range s.fair.Accounts() {
		s.baseRates[name] = s.fair.Account(name, s.now).BaselineRate
	}
	s.recomputeWeights()
	return s, nil
}

// loadActive reads the jobs that have not ended and the attempts that hold
// resources, through their indexes.
func (s *state) loadActive(tx *bolt.Tx, n int) error {
	jobs := tx.Bucket(bucketJobs)
	c := tx.Bucket(bucketJobsActive).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		j := new(jobRecord)
		if ok, err := getJSON(jobs, k, j); err != nil || !ok {
			return fmt.Errorf("active job %d: missing or unreadable record (%v): the state file is damaged; restore a snapshot", readU64(k), err)
		}
		j.Demand = pad(j.Demand, n)
		s.jobs[j.ID] = j
		s.accountJobs[j.Account] = append(s.accountJobs[j.Account], j.ID)
		s.noteDependents(j)
		if j.Running > 0 {
			s.runningJobs[j.Account] = append(s.runningJobs[j.Account], j.ID)
		}
	}
	tasks := tx.Bucket(bucketTasks)
	c = tx.Bucket(bucketTasksActive).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		a := new(attemptRecord)
		if ok, err := getJSON(tasks, k, a); err != nil || !ok {
			return fmt.Errorf("active task %x: missing or unreadable record (%v): the state file is damaged; restore a snapshot", k, err)
		}
		a.Demand = pad(a.Demand, n)
		if a.NodeDemand != nil {
			a.NodeDemand = pad(a.NodeDemand, n)
		}
		id := taskID{a.Job, a.Task}
		s.running[id] = a
		for _, node := range a.allNodes() {
			if nd, ok := s.nodes[node]; ok {
				s.hold(nd, a)
				nd.tasks[id] = struct{}{}
			}
		}
	}
	return nil
}

// loadBooks rebuilds the SU book from the journal and restores the
// fairness book.
func (s *state) loadBooks(tx *bolt.Tx) error {
	// One entry decoded at a time, and the book lets go of them as it
	// goes: the journal stays in the file (install points the book at it
	// for good once the FSM has the file).
	journal := tx.Bucket(bucketJournal)
	su, err := ledger.RebuildSUBookFrom(storedEntries(journal), journalReader(journal))
	if err != nil {
		return fmt.Errorf("SU journal: %w", err)
	}
	s.su = su

	b := tx.Bucket(bucketFairness)
	head := b.Get(keyFairness)
	if head == nil {
		s.fair = ledger.NewFairnessBook(s.window, len(s.settings.Resources))
		return nil
	}
	var st ledger.FairnessState
	if err := json.Unmarshal(head, &st); err != nil {
		return fmt.Errorf("fairness book: %w", err)
	}
	s.fairSaved[string(keyFairness)] = slices.Clone(head)
	c := b.Cursor()
	for k, v := c.Seek(fairAccountPrefix); k != nil && bytes.HasPrefix(k, fairAccountPrefix); k, v = c.Next() {
		var as ledger.AccountState
		if err := json.Unmarshal(v, &as); err != nil {
			return fmt.Errorf("fairness book account %q: %w", k[len(fairAccountPrefix):], err)
		}
		st.Accounts = append(st.Accounts, as)
		s.fairSaved[string(k)] = slices.Clone(v)
	}
	fair, err := ledger.RestoreFairnessBook(padFairness(st, len(s.settings.Resources)))
	if err != nil {
		return err
	}
	s.fair = fair
	return nil
}

// journalReader reads SU journal entries back from b, by sequence
// number, for an SU book that let go of them (ledger.SUBook.KeepJournalIn),
// while b's transaction is open.
func journalReader(b *bolt.Bucket) func(seq uint64) ([]byte, error) {
	return func(seq uint64) ([]byte, error) {
		if v := b.Get(u64(seq)); v != nil {
			return bytes.Clone(v), nil
		}
		return nil, fmt.Errorf("the state file has no journal entry %d", seq)
	}
}

// storedEntries yields the SU journal as stored, in order; an entry that
// does not decode is a *ledger.VerifyError naming it, and ends the
// sequence.
//
// Entries are decoded on a goroutine of their own, decodeAhead at a time
// ahead of the caller, which replays them (a start, a restore, ledger
// verify): decoding is about a third of a replay, and a machine has more
// than one core. The goroutine reads b's pages only, as the caller may
// (journalReader), and has stopped when the sequence ends.
func storedEntries(b *bolt.Bucket) iter.Seq2[ledger.JournalEntry, error] {
	return func(yield func(ledger.JournalEntry, error) bool) {
		batches := make(chan decodedEntries, 2)
		stop := make(chan struct{})
		go decodeEntries(b, batches, stop)
		defer func() {
			close(stop)
			for range batches {
				// Wait for the decoder to stop.
			}
		}()
		for batch := range batches {
			for _, e := range batch.entries {
				if !yield(e, nil) {
					return
				}
			}
			if batch.err != nil {
				yield(ledger.JournalEntry{}, batch.err)
				return
			}
		}
	}
}

// decodeAhead is how many journal entries storedEntries decodes in a batch.
const decodeAhead = 1024

// decodedEntries are journal entries decoded in order, and the error that
// ended them, if any.
type decodedEntries struct {
	entries []ledger.JournalEntry
	err     error
}

// decodeEntries decodes b's journal entries into batches until it has
// sent them all or stop is closed, then closes batches. A page that
// faults or panics while read ends the entries with an error, as a
// damaged file must (boltcheck.Guard does the same on the caller's side).
func decodeEntries(b *bolt.Bucket, batches chan<- decodedEntries, stop <-chan struct{}) {
	defer close(batches)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	batch := decodedEntries{entries: make([]ledger.JournalEntry, 0, decodeAhead)}
	send := func() bool {
		select {
		case batches <- batch:
			batch = decodedEntries{entries: make([]ledger.JournalEntry, 0, decodeAhead)}
			return true
		case <-stop:
			return false
		}
	}
	pos := 0
	var seq uint64
	defer func() {
		if p := recover(); p != nil {
			batch.err = &ledger.VerifyError{Seq: seq + 1, Position: pos, Problem: fmt.Sprintf("reading it failed: %v", p)}
			send()
		}
	}()
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		seq = readU64(k)
		var e ledger.JournalEntry
		if err := e.UnmarshalBinary(v); err != nil {
			batch.err = &ledger.VerifyError{Seq: seq, Position: pos, Problem: err.Error()}
			send()
			return
		}
		batch.entries = append(batch.entries, e)
		pos++
		if len(batch.entries) == decodeAhead && !send() {
			return
		}
	}
	if len(batch.entries) > 0 {
		send()
	}
}

// fairAccountPrefix starts the keys of the fairness book's accounts.
var fairAccountPrefix = []byte("a:")

// forEachJSON decodes every value of a bucket, in key order.
func forEachJSON[T any](b *bolt.Bucket, fn func(k []byte, v *T)) error {
	return b.ForEach(func(k, data []byte) error {
		v := new(T)
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("record %x: %w", k, err)
		}
		fn(k, v)
		return nil
	})
}

// padFairness extends every vector of a fairness state to n resources.
func padFairness(st ledger.FairnessState, n int) ledger.FairnessState {
	if st.Resources >= n {
		return st
	}
	st.Resources = n
	for i := range st.Accounts {
		a := &st.Accounts[i]
		a.Usage, a.Baseline, a.Rate, a.BaselineRate = pad(a.Usage, n), pad(a.Baseline, n), pad(a.Rate, n), pad(a.BaselineRate, n)
		if sl := a.Sliding; sl != nil {
			sl.StartSum = pad(sl.StartSum, n)
			if sl.EndedBase != nil {
				sl.EndedBase = pad(sl.EndedBase, n)
			}
			for k := range sl.Ended {
				sl.Ended[k].Cum = pad(sl.Ended[k].Cum, n)
			}
			for k := range sl.Segments {
				sl.Segments[k].Rate = pad(sl.Segments[k].Rate, n)
				sl.Segments[k].Cum = pad(sl.Segments[k].Cum, n)
			}
		}
	}
	return st
}

// setRunning keeps runningJobs in step with a job's running count.
func (s *state) setRunning(j *jobRecord) {
	ids := s.runningJobs[j.Account]
	i, has := slices.BinarySearch(ids, j.ID)
	switch {
	case j.Running > 0 && !has:
		s.runningJobs[j.Account] = slices.Insert(ids, i, j.ID)
	case j.Running == 0 && has:
		if ids = slices.Delete(ids, i, i+1); len(ids) == 0 {
			delete(s.runningJobs, j.Account)
		} else {
			s.runningJobs[j.Account] = ids
		}
	}
}
