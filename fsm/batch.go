package fsm

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// batch is one ApplyBatch: the write transaction and the state it changes.
// Every handler checks everything before it changes anything, so a refusal
// (an *Error) leaves both untouched; any other error is a store failure that
// aborts the whole batch.
type batch struct {
	tx   *bolt.Tx
	st   *state
	log  *slog.Logger
	hook func(Command)
	// touched are the accounts whose active tasks changed in the current
	// command; all is set when capacity or weights changed.
	touched map[string]bool
	all     bool
	// jobs changed by the current command, written once when it is done.
	jobs map[uint64]*jobRecord
}

func newBatch(tx *bolt.Tx, st *state, log *slog.Logger, hook func(Command)) *batch {
	return &batch{tx: tx, st: st, log: log, hook: hook, touched: make(map[string]bool), jobs: make(map[uint64]*jobRecord)}
}

// safeApply is apply with a panic turned into a value.
func (b *batch) safeApply(l *raft.Log) (res *Result, panicked any, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, panicked, err = nil, p, nil
		}
	}()
	res, err = b.apply(l)
	return res, nil, err
}

func (b *batch) bucket(name []byte) *bolt.Bucket { return b.tx.Bucket(name) }

// markJob schedules a changed job to be written when the command is done,
// so a batch of events for one array rewrites its record once.
func (b *batch) markJob(j *jobRecord) { b.jobs[j.ID] = j }

// apply decodes and applies one command entry.
func (b *batch) apply(l *raft.Log) (*Result, error) {
	r := &Result{Index: l.Index, Time: b.st.now}
	env, err := Decode(l.Data)
	if err != nil {
		if len(l.Data) > 1 {
			r.Type = CommandType(l.Data[1])
		}
		r.Err = err
		return r, nil
	}
	t := max(env.Time, b.st.now)
	b.st.now = t
	r.Time, r.Type = t, env.Command.Type()
	clear(b.touched)
	clear(b.jobs)
	b.all = false
	if b.hook != nil {
		b.hook(env.Command)
	}
	v, err := b.exec(env.Command, t)
	if err != nil {
		var refusal *Error
		if errors.As(err, &refusal) {
			r.Err = refusal
			return r, nil
		}
		return nil, err
	}
	for _, id := range sortedKeys(b.jobs) {
		if err := b.saveJob(b.jobs[id]); err != nil {
			return nil, err
		}
	}
	if err := b.refreshBaselines(t); err != nil {
		return nil, err
	}
	r.Value = v
	return r, nil
}

func (b *batch) exec(cmd Command, t ledger.Time) (any, error) {
	switch c := cmd.(type) {
	case *CreateAccount:
		return b.createAccount(c, t)
	case *UpdateAccount:
		return b.updateAccount(c)
	case *CreateUser:
		return b.createUser(c, t)
	case *AddMembership:
		return b.setMembership(c.User, c.Account, true)
	case *RemoveMembership:
		return b.setMembership(c.User, c.Account, false)
	case *Grant:
		return b.grant(c, t)
	case *UpdateSettings:
		return b.updateSettings(c, t)
	case *SubmitJob:
		return b.submitJob(c, t)
	case *CancelJob:
		return b.cancelJob(c, t)
	case *Assign:
		return b.assign(c, t)
	case *TaskEvents:
		return b.taskEvents(c, t)
	case *NodeUp:
		return b.nodeUp(c, t)
	case *NodeDown:
		return b.nodeDown(c, t)
	case *CreateToken:
		return b.createToken(c, t)
	case *RevokeToken:
		return b.revokeToken(c, t)
	}
	return nil, invalid("command %T has no handler", cmd)
}

// finish writes what the batch changed besides the records the handlers
// wrote: the meta counters and the fairness book.
func (b *batch) finish() error {
	st := b.st
	meta := b.bucket(bucketMeta)
	applied := append(u64(st.applied), u64(st.term)...)
	for _, kv := range [][2][]byte{
		{keyApplied, applied},
		{keyTime, u64(uint64(st.now))},
		{keyNextJob, u64(st.nextJob)},
		{keyNextGrant, u64(st.nextGrant)},
	} {
		if err := meta.Put(kv[0], kv[1]); err != nil {
			return fmt.Errorf("store meta %s: %w", kv[0], err)
		}
	}
	return b.saveFairness()
}

// saveFairness writes the fairness book's header and every account whose
// state differs from what was last written.
func (b *batch) saveFairness() error {
	st := b.st
	fs := st.fair.State()
	accounts := fs.Accounts
	fs.Accounts = nil
	want := map[string]any{string(keyFairness): fs}
	for _, a := range accounts {
		want[string(fairAccountPrefix)+a.Name] = a
	}
	bk := b.bucket(bucketFairness)
	for _, key := range sortedKeys(want) {
		data, err := jsonBytes(want[key])
		if err != nil {
			return fmt.Errorf("encode fairness %s: %w", key, err)
		}
		if prev, ok := st.fairSaved[key]; ok && string(prev) == string(data) {
			continue
		}
		if err := bk.Put([]byte(key), data); err != nil {
			return fmt.Errorf("store fairness %s: %w", key, err)
		}
		st.fairSaved[key] = data
	}
	for _, key := range sortedKeys(st.fairSaved) {
		if _, ok := want[key]; !ok {
			if err := bk.Delete([]byte(key)); err != nil {
				return fmt.Errorf("delete fairness %s: %w", key, err)
			}
			delete(st.fairSaved, key)
		}
	}
	return nil
}

// refreshBaselines gives the fairness book the new non-sharing baseline
// rate of every account whose active tasks, weight or share changed.
func (b *batch) refreshBaselines(t ledger.Time) error {
	st := b.st
	if !b.all && len(b.touched) == 0 {
		return nil
	}
	if b.all {
		st.recomputeWeights()
	}
	names := st.accountNames
	if !b.all {
		names = sortedKeys(b.touched)
	}
	for _, name := range names {
		if _, ok := st.accounts[name]; !ok {
			continue
		}
		rate := st.baselineRate(name)
		old, ok := st.baseRates[name]
		if ok && sameBits(old, rate) || !ok && rate.IsZero() {
			continue
		}
		st.fair.SetBaselineRate(name, rate, t)
		st.baseRates[name] = rate
	}
	return nil
}

func sameBits(a, b ledger.Vector) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}
