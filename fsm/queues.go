package fsm

import (
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
)

// Latency queues (BPF, sched/bpf.go): an account declared a latency queue
// has periodic bursts — the n-th arrives at Start + n·Period, holds up to
// Burst while it runs and should be done Deadline later — and the class
// admission control gave it when it was declared: hard, soft or elastic.
// Every other account is a throughput queue. Only bpf and sp look at them.
//
// Admission control runs once, when the queue is declared, against the
// capacity of the up nodes and the accounts' weights at that moment (every
// account counts as a queue). Later changes are not re-checked: remove
// the queue and declare it again to have it judged anew.

// CreateLatencyQueue declares a latency queue for an account. A queue
// admission control rejects is refused (KindPrecondition) with the
// reason; otherwise it is stored with its class and the reason for it.
// Start 0 means the command's time: the first burst starts now.
type CreateLatencyQueue struct {
	Account  string             `json:"account"`
	Start    ledger.Time        `json:"start,omitempty"`
	Period   time.Duration      `json:"period"`
	Deadline time.Duration      `json:"deadline"`
	Burst    map[string]float64 `json:"burst"`
}

// RemoveLatencyQueue makes an account a throughput queue again.
type RemoveLatencyQueue struct {
	Account string `json:"account"`
}

func (*CreateLatencyQueue) Type() CommandType { return TypeCreateLatencyQueue }
func (*RemoveLatencyQueue) Type() CommandType { return TypeRemoveLatencyQueue }

// MaxQueuePeriod bounds a latency queue's period.
const MaxQueuePeriod = 365 * 24 * time.Hour

func (c *CreateLatencyQueue) validate(r rules) *Error {
	if err := checkName("account name", c.Account); err != nil {
		return err
	}
	if c.Start < 0 {
		return invalid("latency queue start %d is before 1970: leave it unset for now", c.Start)
	}
	if c.Period <= 0 || c.Period > MaxQueuePeriod {
		return invalid("latency queue period %v must be positive and at most %v, e.g. 10m", c.Period, MaxQueuePeriod)
	}
	if c.Deadline <= 0 || c.Deadline > c.Period {
		return invalid("latency queue deadline %v must be positive and at most the period %v: a burst must be done before the next one arrives", c.Deadline, c.Period)
	}
	if len(c.Burst) == 0 {
		return invalid("latency queue burst is empty: give what a burst holds while it runs, e.g. cpu=64,mem=128G")
	}
	if len(c.Burst) > MaxResources {
		return invalid("latency queue burst names %d resources: a cluster has at most %d", len(c.Burst), MaxResources)
	}
	if err := checkQuantities("burst", c.Burst); err != nil {
		return err
	}
	for _, x := range c.Burst {
		if x > 0 {
			return nil
		}
	}
	return invalid("latency queue burst is zero in every resource: give what a burst holds while it runs, e.g. cpu=64")
}

func (c *RemoveLatencyQueue) validate(r rules) *Error { return checkName("account name", c.Account) }

// bucketQueues holds the latency queues by account.
var bucketQueues = []byte("latency_queues")

// queueRecord is a latency queue as stored. BurstStart and Used are what
// the burst under way has been given: for every task of the account placed
// since BurstStart, its demand times its walltime (resource-seconds).
type queueRecord struct {
	Account    string           `json:"account"`
	Start      ledger.Time      `json:"start"`
	Period     time.Duration    `json:"period"`
	Deadline   time.Duration    `json:"deadline"`
	Burst      ledger.Vector    `json:"burst"`
	Class      sched.QueueClass `json:"class"`
	Reason     string           `json:"reason"`
	CreatedAt  ledger.Time      `json:"created_at"`
	BurstStart ledger.Time      `json:"burst_start"`
	Used       ledger.Vector    `json:"used,omitempty"`
}

func (q *queueRecord) spec(n int) sched.LatencySpec {
	return sched.LatencySpec{Start: q.Start, Period: q.Period, Deadline: q.Deadline, Burst: pad(q.Burst.Clone(), n)}
}

// usedAt is what the burst under way at now has been given; nil when
// nothing was placed since it began.
func (q *queueRecord) usedAt(now ledger.Time, n int) ledger.Vector {
	spec := q.spec(n)
	if q.Used == nil || spec.BurstStart(now) != q.BurstStart {
		return nil
	}
	return pad(q.Used.Clone(), n)
}

// QueueInfo is a latency queue.
type QueueInfo struct {
	Account  string
	Start    ledger.Time
	Period   time.Duration
	Deadline time.Duration
	Burst    map[string]float64
	Class    sched.QueueClass
	// Reason is admission control's explanation of the class.
	Reason    string
	CreatedAt ledger.Time
	// BurstStart is when the burst under way at the time asked about
	// began, and Used what it has been given (demand × walltime of the
	// tasks placed since, in resource-seconds).
	BurstStart ledger.Time
	Used       map[string]float64
}

// createLatencyQueue applies CreateLatencyQueue; the result is a QueueInfo.
func (b *batch) createLatencyQueue(c *CreateLatencyQueue, t ledger.Time) (any, error) {
	st := b.st
	if _, ok := st.accounts[c.Account]; !ok {
		return nil, notFound("account %q does not exist: create it before declaring its latency queue", c.Account)
	}
	if q, ok := st.queues.byAccount[c.Account]; ok {
		return nil, refuse(KindExists, "account %q already has a latency queue (%v): remove it first to declare a new one", c.Account, q.Class)
	}
	n := len(st.settings.Resources)
	burst := ledger.NewVector(n)
	for _, name := range sortedKeys(c.Burst) {
		k := slices.Index(st.settings.Resources, name)
		if k < 0 {
			return nil, invalid("burst names resource %q, which the cluster does not have: its resources are %s", name, strings.Join(st.settings.Resources, ", "))
		}
		burst[k] = c.Burst[name]
	}
	if st.capacity.IsZero() {
		return nil, refuse(KindPrecondition, "no worker node is up: admission control measures a queue's bursts against the cluster's capacity; declare the queue once workers have joined")
	}
	start := c.Start
	if start == 0 {
		start = t
	}
	spec := &sched.LatencySpec{Start: start, Period: c.Period, Deadline: c.Deadline, Burst: burst}
	decision, err := sched.AdmitQueue(st.settings.Resources, st.capacity, st.admittedQueues(c.Account), sched.QueueRequest{
		Name: c.Account, Weight: st.weights[c.Account], Latency: spec,
	})
	if err != nil {
		return nil, invalid("latency queue: %v", err)
	}
	if decision.Class == sched.Rejected {
		return nil, refuse(KindPrecondition, "admission control rejects the latency queue of account %q: %s", c.Account, decision.Reason)
	}
	q := &queueRecord{
		Account: c.Account, Start: start, Period: c.Period, Deadline: c.Deadline, Burst: burst,
		Class: decision.Class, Reason: decision.Reason, CreatedAt: t, BurstStart: spec.BurstStart(t),
	}
	if err := putJSON(b.bucket(bucketQueues), []byte(q.Account), q); err != nil {
		return nil, err
	}
	st.queues.byAccount[q.Account] = q
	return st.queueInfo(q, t), nil
}

// removeLatencyQueue applies RemoveLatencyQueue; the result is the removed
// QueueInfo.
func (b *batch) removeLatencyQueue(c *RemoveLatencyQueue, t ledger.Time) (any, error) {
	st := b.st
	q, ok := st.queues.byAccount[c.Account]
	if !ok {
		return nil, notFound("account %q has no latency queue: list them with 'longfair queue list'", c.Account)
	}
	if err := b.bucket(bucketQueues).Delete([]byte(c.Account)); err != nil {
		return nil, err
	}
	delete(st.queues.byAccount, c.Account)
	delete(st.queues.dirty, c.Account)
	return st.queueInfo(q, t), nil
}

// admittedQueues is every account but except, as a queue admission control
// has let in, in name order: latency queues with their class, throughput
// queues as elastic.
func (s *state) admittedQueues(except string) []sched.AdmittedQueue {
	n := len(s.settings.Resources)
	out := make([]sched.AdmittedQueue, 0, len(s.accountNames))
	for _, name := range s.accountNames {
		if name == except {
			continue
		}
		aq := sched.AdmittedQueue{QueueRequest: sched.QueueRequest{Name: name, Weight: s.weights[name]}, Class: sched.Elastic}
		if q, ok := s.queues.byAccount[name]; ok {
			spec := q.spec(n)
			aq.Latency, aq.Class = &spec, q.Class
		}
		out = append(out, aq)
	}
	return out
}

// noteQueuePlacement counts a placed task of job j against its account's
// burst under way, if the account is a latency queue: demand × walltime,
// as the engine counts it (sched.LatencyQueue.Used). The record is written
// when the batch commits.
func (b *batch) noteQueuePlacement(j *jobRecord, t ledger.Time) {
	q, ok := b.st.queues.byAccount[j.Account]
	if !ok {
		return
	}
	n := len(b.st.settings.Resources)
	spec := q.spec(n)
	if bs := spec.BurstStart(t); bs != q.BurstStart || q.Used == nil {
		q.BurstStart, q.Used = bs, ledger.NewVector(n)
	}
	q.Used = pad(q.Used, n)
	expected := j.Walltime
	if expected <= 0 {
		expected = q.Deadline
	}
	q.Used.AddScaled(j.Demand, expected.Seconds())
	b.st.queues.dirty[q.Account] = true
}

// saveQueues writes the latency queues whose burst usage changed.
func (b *batch) saveQueues() error {
	qs := &b.st.queues
	for _, name := range sortedKeys(qs.dirty) {
		if q, ok := qs.byAccount[name]; ok {
			if err := putJSON(b.bucket(bucketQueues), []byte(name), q); err != nil {
				return err
			}
		}
	}
	clear(qs.dirty)
	return nil
}

func (s *state) queueInfo(q *queueRecord, at ledger.Time) QueueInfo {
	n := len(s.settings.Resources)
	spec := q.spec(n)
	used := q.usedAt(at, n)
	if used == nil {
		used = ledger.NewVector(n)
	}
	return QueueInfo{
		Account: q.Account, Start: q.Start, Period: q.Period, Deadline: q.Deadline, Burst: s.named(q.Burst),
		Class: q.Class, Reason: q.Reason, CreatedAt: q.CreatedAt, BurstStart: spec.BurstStart(at), Used: s.named(used),
	}
}

// LatencyQueues lists the latency queues by account, with their bursts
// under way at time at.
func (f *FSM) LatencyQueues(at ledger.Time) []QueueInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	at = max(at, f.st.now)
	out := make([]QueueInfo, 0, len(f.st.queues.byAccount))
	for _, name := range sortedKeys(f.st.queues.byAccount) {
		out = append(out, f.st.queueInfo(f.st.queues.byAccount[name], at))
	}
	return out
}

// viewLatency is an account's latency queue for a scheduling view at now,
// or nil for a throughput queue.
func (s *state) viewLatency(account string, now ledger.Time) *sched.LatencyQueue {
	q, ok := s.queues.byAccount[account]
	if !ok {
		return nil
	}
	n := len(s.settings.Resources)
	return &sched.LatencyQueue{LatencySpec: q.spec(n), Class: q.Class, Used: q.usedAt(now, n)}
}

// queueState is the latency queues in memory; dirty names those whose
// burst usage changed in the current batch.
type queueState struct {
	byAccount map[string]*queueRecord
	dirty     map[string]bool
}

// load reads every latency queue.
func (q *queueState) load(tx *bolt.Tx) error {
	q.byAccount = make(map[string]*queueRecord)
	q.dirty = make(map[string]bool)
	b := tx.Bucket(bucketQueues)
	if b == nil {
		return nil
	}
	return forEachJSON(b, func(_ []byte, r *queueRecord) { q.byAccount[r.Account] = r })
}
