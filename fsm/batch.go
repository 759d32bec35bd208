package fsm

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
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
	// noHistory is Options.noHistory (history.go).
	noHistory bool
	// touched are the accounts whose active tasks changed in the current
	// command; all is set when capacity or weights changed.
	touched map[string]bool
	all     bool
	// jobs changed by the current command, written once when it is done.
	jobs map[uint64]*jobRecord
	// index is the current entry's; single is set when it holds one
	// command, not several (checkpoints must be entries of their own).
	index  uint64
	single bool
	// rules are those of the command being applied: its envelope version's.
	rules rules
	// integ receives the leader's checkpoint digests (integrity.go).
	integ *integrity
}

func newBatch(tx *bolt.Tx, st *state, log *slog.Logger, hook func(Command), integ *integrity) *batch {
	fillAppended(tx)
	return &batch{tx: tx, st: st, log: log, hook: hook, integ: integ, touched: make(map[string]bool), jobs: make(map[uint64]*jobRecord)}
}

// poisonKey names a command that made the FSM panic: the position of its
// entry in the ApplyBatch call, and its position within the entry (0 for a
// single-command entry).
type poisonKey struct{ entry, command int }

// applyEntry applies one command entry: a single command, answered with a
// *Result, or a multi-command entry, answered with Results (or, when it
// cannot even be split into commands, with one *Result refusing it whole).
// The commands of a multi-command entry apply exactly as consecutive
// entries would: each is checked before it changes anything, so a refused
// one leaves no trace while the others apply.
//
// A command recorded in poisoned is refused as Internal without running.
// When a command panics, applyEntry records it in poisoned and reports
// panicked: the caller rolls the transaction back and applies the batch
// again, with only that command refused.
func (b *batch) applyEntry(l *raft.Log, entry int, poisoned map[poisonKey]any) (resp any, panicked bool, err error) {
	b.single = !IsMulti(l.Data)
	if b.single {
		r, panicked, err := b.applyCommand(l.Index, l.Data, poisonKey{entry, 0}, poisoned)
		if r == nil {
			return nil, panicked, err
		}
		return r, false, nil
	}
	parts, err := SplitMulti(l.Data)
	if err != nil {
		return &Result{Index: l.Index, Time: b.st.now, Err: err}, false, nil
	}
	out := make(Results, len(parts))
	for k, part := range parts {
		r, panicked, err := b.applyCommand(l.Index, part, poisonKey{entry, k}, poisoned)
		if r == nil {
			return nil, panicked, err
		}
		out[k] = r
	}
	return out, false, nil
}

// applyCommand applies one single-command entry. It returns a nil *Result when
// the command panicked or the store failed.
func (b *batch) applyCommand(index uint64, data []byte, key poisonKey, poisoned map[poisonKey]any) (*Result, bool, error) {
	if p, ok := poisoned[key]; ok {
		r := &Result{Index: index, Time: b.st.now, Err: refuse(KindInternal,
			"this command hit a bug in the server (%v) and was refused on every server: report it with the server log", p)}
		if len(data) > 1 {
			r.Type = CommandType(data[1])
		}
		return r, false, nil
	}
	r, p, stack, err := b.safeApply(index, data)
	if p != nil {
		b.log.Error("fsm: a command panicked; refusing it and applying the rest of the batch",
			"index", index, "command", key.command, "panic", p, "stack", string(stack))
		poisoned[key] = p
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return r, false, nil
}

// safeApply is apply with a panic turned into a value and the stack where
// it happened.
func (b *batch) safeApply(index uint64, data []byte) (res *Result, panicked any, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, panicked, stack, err = nil, p, debug.Stack(), nil
		}
	}()
	res, err = b.apply(index, data)
	return res, nil, nil, err
}

func (b *batch) bucket(name []byte) *bolt.Bucket { return b.tx.Bucket(name) }

// markJob schedules a changed job to be written when the command is done,
// so a batch of events for one array rewrites its record once.
func (b *batch) markJob(j *jobRecord) { b.jobs[j.ID] = j }

// apply decodes and applies one command: a single-command entry, alone or from
// a multi-command entry at log index index.
func (b *batch) apply(index uint64, data []byte) (*Result, error) {
	r := &Result{Index: index, Time: b.st.now}
	b.index = index
	env, err := Decode(data)
	if err != nil {
		if len(data) > 1 {
			r.Type = CommandType(data[1])
		}
		r.Err = err
		return r, nil
	}
	b.rules = rules{version: env.Version}
	t := max(env.Time, b.st.now)
	if env.Command.Type() != TypeCheckpoint {
		// A checkpoint changes nothing but the applied index, so that a
		// server of an earlier release, which refuses it as unknown,
		// still holds the same state.
		b.st.now = t
	}
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
	if env.Command.Type() != TypeCheckpoint && !b.noHistory {
		if err := b.recordHistory(t); err != nil {
			return nil, err
		}
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
	case *HoldJob:
		return b.holdJob(c)
	case *SetLimits:
		return b.setLimits(c)
	case *UpdateJob:
		return b.updateJob(c)
	case *RequeueJob:
		return b.requeueJob(c, t)
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
	case *SetGroupWeight:
		return b.setGroupWeight(c, t)
	case *RemoveGroup:
		return b.removeGroup(c)
	case *SetAccountGroup:
		return b.setAccountGroup(c, t)
	case *CreateLatencyQueue:
		return b.createLatencyQueue(c, t)
	case *RemoveLatencyQueue:
		return b.removeLatencyQueue(c, t)
	case *SetShares:
		return b.setShares(c, t)
	case *Checkpoint:
		return b.checkpoint(c)
	case *SetUserUnix:
		return b.setUserUnix(c)
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
	// The derived indexes are complete up to here (indexes.go).
	if err := markIndexes(b.tx, st.applied); err != nil {
		return err
	}
	if err := b.saveQueues(); err != nil {
		return fmt.Errorf("store latency queues: %w", err)
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
	st.jobTotals.drop(names)
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
