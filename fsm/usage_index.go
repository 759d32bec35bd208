package fsm

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// bucketTasksEnded indexes the ended attempts by when they ended, each
// with what a usage report reads of it, packed (encodeEnded). A report
// over [From, To) then reads the attempts that ended from From until To
// plus the longest time any attempt held resources (an attempt ending
// later started after To), and the running ones, instead of decoding every
// attempt of the history: a month of a centre-year is a twelfth of it.
//
// It is a derived index (indexes.go), made from the tasks bucket alone.
var bucketTasksEnded = []byte("tasks_ended")

// endedKeyLen is an attempt's key in the index: its end time, then its
// key in the tasks bucket.
const endedKeyLen = 8 + 20

// endedFormat is the first byte of a packed attempt.
const endedFormat = 1

func endedKey(a *attemptRecord) []byte {
	k := make([]byte, 8, endedKeyLen)
	binary.BigEndian.PutUint64(k, uint64(a.EndedAt))
	return append(k, taskKey(a.Job, a.Task, a.Attempt)...)
}

// heldFrom is when an attempt began holding its resources: when it
// started, or when it was placed if no start was reported; a queued one
// that never started held nothing (its end, for an ended one).
func (a *attemptRecord) heldFrom() ledger.Time {
	switch {
	case a.StartedAt != 0:
		return a.StartedAt
	case a.Queued:
		return a.EndedAt
	}
	return a.AssignedAt
}

// indexEnded adds an ended attempt to the index and raises the longest
// span. Only endAttempt ends an attempt and an ended one is never written
// again, so each is indexed once, under the end time it keeps.
func indexEnded(b *bolt.Bucket, a *attemptRecord) error {
	if a.State.active() || a.EndedAt <= 0 {
		return nil
	}
	if err := b.Put(endedKey(a), encodeEnded(a)); err != nil {
		return fmt.Errorf("index ended attempt %d.%d.%d: %w", a.Job, a.Task, a.Attempt, err)
	}
	if err := raiseMaxSpan(b, a.EndedAt.Sub(a.heldFrom())); err != nil {
		return fmt.Errorf("index ended attempt %d.%d.%d: %w", a.Job, a.Task, a.Attempt, err)
	}
	return nil
}

// encodeEnded packs what a usage report reads of an ended attempt.
func encodeEnded(a *attemptRecord) []byte {
	buf := make([]byte, 0, 64+8*(len(a.Demand)+len(a.NodeDemand)))
	buf = append(buf, endedFormat)
	buf = appendString(buf, a.Account)
	buf = appendString(buf, a.User)
	buf = appendString(buf, string(a.State))
	buf = binary.AppendVarint(buf, int64(a.EndedAt.Sub(a.heldFrom())))
	buf = binary.AppendVarint(buf, int64(a.Runtime))
	buf = binary.AppendVarint(buf, int64(a.Charged))
	buf = appendVector(buf, a.Demand)
	buf = appendVector(buf, a.NodeDemand)
	buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(a.CPUSeconds))
	return binary.AppendVarint(buf, a.PeakMemBytes)
}

// decodeEnded unpacks an index entry into the fields of a that a usage
// report reads; a.AssignedAt holds when it began holding resources. With
// account set, it stops after the account when it is another's (ok false).
func decodeEnded(k, v []byte, account string, a *attemptRecord) (ok bool, err error) {
	if len(k) != endedKeyLen || len(v) == 0 || v[0] != endedFormat {
		return false, fmt.Errorf("index of ended attempts: entry %x is not one this release wrote", k)
	}
	d := packed{b: v[1:]}
	if a.Account = d.string(); account != "" && a.Account != account {
		return false, d.err
	}
	a.User = d.string()
	a.State = TaskState(d.string())
	a.EndedAt = ledger.Time(readU64(k[:8]))
	a.AssignedAt, a.StartedAt = a.EndedAt.Add(-time.Duration(d.varint())), 0
	a.Runtime = time.Duration(d.varint())
	a.Charged = ledger.SU(d.varint())
	a.Demand = d.vector(a.Demand)
	a.NodeDemand = d.vector(a.NodeDemand)
	a.CPUSeconds = math.Float64frombits(d.uint64())
	a.PeakMemBytes = d.varint()
	if d.err != nil {
		return false, fmt.Errorf("index of ended attempts: entry %x: %w", k, d.err)
	}
	return true, nil
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// appendVector packs v; nil and empty both unpack as nil.
func appendVector(buf []byte, v ledger.Vector) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(v)))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	}
	return buf
}

// packed reads what encodeEnded wrote; the first error sticks and every
// later read returns a zero value.
type packed struct {
	b   []byte
	err error
}

func (p *packed) fail() {
	if p.err == nil {
		p.err = fmt.Errorf("truncated or damaged")
	}
	p.b = nil
}

func (p *packed) uvarint() uint64 {
	x, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return x
}

func (p *packed) varint() int64 {
	x, n := binary.Varint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return x
}

func (p *packed) uint64() uint64 {
	if len(p.b) < 8 {
		p.fail()
		return 0
	}
	x := binary.LittleEndian.Uint64(p.b)
	p.b = p.b[8:]
	return x
}

func (p *packed) string() string {
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		p.fail()
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

// vector unpacks a vector into into's storage when it is big enough.
func (p *packed) vector(into ledger.Vector) ledger.Vector {
	n := p.uvarint()
	if n == 0 || n > uint64(len(p.b)/8) {
		if n != 0 {
			p.fail()
		}
		return nil
	}
	v := into[:0]
	for range n {
		v = append(v, math.Float64frombits(p.uint64()))
	}
	return v
}
