package fsm

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/longfair/longfair/ledger"
	bolt "go.etcd.io/bbolt"
)

// The fairness history is what the dashboard's charts draw: per account β,
// Ü, the baseline, the share, SU available, pending and running tasks, over
// the last hour, day, week and window.
//
// It is recorded in the FSM, at applied commands' times, rather than
// derived on read: β and Ü at a past time depend on the whole state then
// (running tasks, the decayed book, capacity, weights), which nothing kept
// after the fact can rebuild short of replaying the log. Recorded from
// committed commands and their leader times, it is the same on every
// replica, survives a restart (it is in the bbolt file) and a leader
// change or a new server (it is in the snapshot, which is that file).
//
// A sample is taken by the first command (other than a checkpoint, which
// changes nothing) applied at or after each step of a tier, at that
// command's time, after it applied. Each tier is a ring of a fixed number
// of slots, so the history's size is bounded by slots × accounts whatever
// the uptime. An idle cluster, committing nothing, has gaps: nothing it
// reports changed but the book's decay.
//
// The history is left out of Digest (see historyBucketSkipped): it is a
// report of the state, not state the scheduler or the ledger reads, and
// leaving it out keeps a checkpoint's digest comparable with servers of
// the release before it during a rolling upgrade, and the frozen fixtures'
// digests as they were.

// HistoryResolution is one tier of the fairness history.
type HistoryResolution uint8

// The tiers, finest first.
const (
	HistoryMinute HistoryResolution = iota
	HistoryHour
	HistoryDay
)

// historyTiers are each tier's step and slots: an hour of minutes, a week
// of hours (which also covers the last day), 90 days of days (the longest
// window a policy commonly uses).
var historyTiers = [...]struct {
	step  time.Duration
	slots int
}{
	HistoryMinute: {time.Minute, 60},
	HistoryHour:   {time.Hour, 168},
	HistoryDay:    {24 * time.Hour, 90},
}

// HistoryStep is a tier's step; ok is false for an unknown tier.
func HistoryStep(r HistoryResolution) (step time.Duration, slots int, ok bool) {
	if int(r) >= len(historyTiers) {
		return 0, 0, false
	}
	return historyTiers[r].step, historyTiers[r].slots, true
}

var bucketHistory = []byte("history")

// HistorySample is the state of the accounts at one time.
type HistorySample struct {
	At        ledger.Time    `json:"at"`
	Resources []string       `json:"r"`
	Accounts  []HistoryPoint `json:"a"`
}

// HistoryPoint is one account in a sample. Vectors are in the sample's
// resource order.
type HistoryPoint struct {
	Account   string        `json:"n"`
	Beta      float64       `json:"b,omitempty"`
	HasBeta   bool          `json:"hb,omitempty"`
	Usage     ledger.Vector `json:"u"`
	Baseline  ledger.Vector `json:"bl"`
	Share     ledger.Vector `json:"s"`
	Available ledger.SU     `json:"su"`
	Pending   int64         `json:"p,omitempty"`
	Running   int64         `json:"rn,omitempty"`
}

// historyKey is a slot's key: the tier, then the slot's number.
func historyKey(r HistoryResolution, slot int) []byte {
	k := make([]byte, 3)
	k[0] = byte(r)
	binary.BigEndian.PutUint16(k[1:], uint16(slot))
	return k
}

// loadHistory reads the step each tier last sampled, from the slots'
// leading 8 bytes (the step's start).
func (s *state) loadHistory(tx *bolt.Tx) {
	b := tx.Bucket(bucketHistory)
	if b == nil {
		return
	}
	_ = b.ForEach(func(k, v []byte) error {
		if len(k) == 3 && int(k[0]) < len(historyTiers) && len(v) >= 8 {
			s.historyLast[k[0]] = max(s.historyLast[k[0]], ledger.Time(readU64(v[:8])))
		}
		return nil
	})
}

// recordHistory takes a sample at t for each tier whose step t has
// entered since its last sample. It costs one comparison per tier on most
// commands; the sample itself, once a minute, is one fairness row per
// account.
func (b *batch) recordHistory(t ledger.Time) error {
	st := b.st
	var enc []byte
	for r, tier := range historyTiers {
		start := t - t%ledger.Time(tier.step)
		if start <= st.historyLast[r] {
			continue
		}
		if len(st.accountNames) == 0 {
			return nil
		}
		if enc == nil {
			sample := HistorySample{At: t, Resources: slices.Clone(st.settings.Resources)}
			for _, name := range st.accountNames {
				row := st.fairnessRow(name, t)
				n := len(st.settings.Resources)
				fa := st.fair.Account(name, t)
				p := HistoryPoint{
					Account: name, HasBeta: row.HasBeta, Usage: pad(fa.Usage, n), Baseline: pad(fa.Baseline, n),
					Share: st.share(name), Available: row.Available, Pending: row.Pending, Running: row.Running,
				}
				if row.HasBeta {
					p.Beta = row.Beta
				}
				sample.Accounts = append(sample.Accounts, p)
			}
			body, err := json.Marshal(sample)
			if err != nil {
				return fmt.Errorf("encode the fairness history's sample: %w", err)
			}
			enc = body
		}
		v := append(u64(uint64(start)), enc...)
		slot := int(start/ledger.Time(tier.step)) % tier.slots
		if err := b.bucket(bucketHistory).Put(historyKey(HistoryResolution(r), slot), v); err != nil {
			return fmt.Errorf("store the fairness history: %w", err)
		}
		st.historyLast[r] = start
	}
	return nil
}

// History returns the samples of tier r taken in [from, to], oldest
// first, with only the named accounts (every account if names is empty).
func (f *FSM) History(r HistoryResolution, from, to ledger.Time, names []string) ([]HistorySample, error) {
	step, slots, ok := HistoryStep(r)
	if !ok {
		return nil, invalid("history resolution %d is not one of minute (0), hour (1), day (2)", r)
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return nil, fmt.Errorf("fsm: history of a closed FSM")
	}
	// A slot no command reached in the last lap still holds a sample of
	// an earlier one: older than the ring's span, it is not shown.
	oldest := f.st.historyLast[r] - ledger.Time(slots)*ledger.Time(step)
	var out []HistorySample
	err := f.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketHistory).Cursor()
		prefix := []byte{byte(r)}
		for k, v := c.Seek(prefix); k != nil && k[0] == byte(r); k, v = c.Next() {
			if len(v) < 8 || ledger.Time(readU64(v[:8])) <= oldest {
				continue
			}
			var s HistorySample
			if err := json.Unmarshal(v[8:], &s); err != nil {
				return fmt.Errorf("fsm: the fairness history's slot %x: %w", k, err)
			}
			if s.At < from || s.At > to {
				continue
			}
			if len(names) > 0 {
				s.Accounts = slices.DeleteFunc(s.Accounts, func(p HistoryPoint) bool { return !slices.Contains(names, p.Account) })
			}
			out = append(out, s)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b HistorySample) int { return cmp.Compare(a.At, b.At) })
	return out, err
}
