package ledger

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// journalEncodingVersion is the first byte of every encoded entry. A change
// to the encoding must bump it, because old hashes were computed over the
// old encoding. Version 2 adds the charge detail's billing rule; an entry
// whose rule is BillingSum (every entry made before rules existed) is still
// written as version 1, so old entries keep their bytes and hashes and each
// entry has exactly one encoding.
const (
	journalEncodingVersion     = 1
	journalEncodingVersionRule = 2
)

// ErrBadEntryEncoding is wrapped by every UnmarshalBinary error.
var ErrBadEntryEncoding = errors.New("malformed journal entry encoding")

// The canonical encoding of an entry, all integers big-endian:
//
//	version u8 | seq u64 | time i64 | kind u8 | id str | hold_id str |
//	account str | amount i64 | expires i64 | requested i64 |
//	funds u32 × (grant str | amount i64) |
//	runtime i64 | resources u32 × str | demand u32 × f64 | weights u32 × f64 |
//	[rule u8, version 2 only] | prev_hash [32] | hash [32]
//
// where str is a u32 length then the bytes, and f64 is the IEEE-754 bits.
// The hash is the SHA-256 of everything before it. The encoding is
// canonical: every entry has exactly one encoding, and every byte string
// that decodes re-encodes to itself, so equal bytes mean equal entries.

// MarshalBinary returns the canonical encoding of e, hash included. The FSM
// stores exactly these bytes; UnmarshalBinary reads them back.
func (e JournalEntry) MarshalBinary() ([]byte, error) {
	b := e.appendBody(make([]byte, 0, e.encodedSizeHint()))
	return append(b, e.Hash[:]...), nil
}

// UnmarshalBinary reads an entry written by MarshalBinary. It checks the
// layout only; whether the hash is right is Verify's business.
func (e *JournalEntry) UnmarshalBinary(data []byte) error {
	d := entryDecoder{buf: data}
	v, err := d.entry()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadEntryEncoding, err)
	}
	*e = v
	return nil
}

// ComputeHash returns the hash e should carry: the SHA-256 of its canonical
// encoding without the hash, PrevHash included.
func (e JournalEntry) ComputeHash() Hash {
	// Most entries fit the stack buffer, which keeps hashing allocation-free.
	var buf [512]byte
	return sha256.Sum256(e.appendBody(buf[:0]))
}

func (e JournalEntry) encodedSizeHint() int {
	n := 2 + 8 + 8 + 1 + 3*4 + len(e.ID) + len(e.HoldID) + len(e.Account) + 3*8 + 4 + 8 + 3*4 + 64
	for _, f := range e.Funds {
		n += 4 + len(f.Grant) + 8
	}
	for _, r := range e.Detail.Resources {
		n += 4 + len(r)
	}
	return n + 8*(len(e.Detail.Demand)+len(e.Detail.Weights))
}

func (e JournalEntry) appendBody(b []byte) []byte {
	if e.Detail.Rule == BillingSum {
		b = append(b, journalEncodingVersion)
	} else {
		b = append(b, journalEncodingVersionRule)
	}
	b = binary.BigEndian.AppendUint64(b, e.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Time))
	b = append(b, byte(e.Kind))
	b = appendEntryString(b, e.ID)
	b = appendEntryString(b, e.HoldID)
	b = appendEntryString(b, e.Account)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Amount))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Expires))
	b = binary.BigEndian.AppendUint64(b, uint64(e.Requested))
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Funds)))
	for _, f := range e.Funds {
		b = appendEntryString(b, f.Grant)
		b = binary.BigEndian.AppendUint64(b, uint64(f.Amount))
	}
	b = binary.BigEndian.AppendUint64(b, uint64(e.Detail.Runtime))
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Detail.Resources)))
	for _, r := range e.Detail.Resources {
		b = appendEntryString(b, r)
	}
	b = appendEntryFloats(b, e.Detail.Demand)
	b = appendEntryFloats(b, e.Detail.Weights)
	if e.Detail.Rule != BillingSum {
		b = append(b, byte(e.Detail.Rule))
	}
	return append(b, e.PrevHash[:]...)
}

func appendEntryString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendEntryFloats(b []byte, xs []float64) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(xs)))
	for _, x := range xs {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// entryDecoder reads the canonical encoding. The first error sticks: later
// reads return zero values, and entry reports it. Every length is checked
// against the bytes that are left before anything is allocated, so a
// corrupted length cannot make it allocate more than the input's size.
type entryDecoder struct {
	buf []byte
	off int
	err error
}

func (d *entryDecoder) entry() (JournalEntry, error) {
	var e JournalEntry
	version := d.u8("version")
	if d.err == nil && version != journalEncodingVersion && version != journalEncodingVersionRule {
		return e, fmt.Errorf("encoding version %d, want %d or %d", version, journalEncodingVersion, journalEncodingVersionRule)
	}
	e.Seq = d.u64("seq")
	e.Time = Time(d.u64("time"))
	e.Kind = EntryKind(d.u8("kind"))
	e.ID = d.str("id")
	e.HoldID = d.str("hold_id")
	e.Account = d.str("account")
	e.Amount = SU(d.u64("amount"))
	e.Expires = Time(d.u64("expires"))
	e.Requested = SU(d.u64("requested"))
	if n := d.count("funds", 4+8); n > 0 {
		e.Funds = make([]Fund, n)
		for i := range e.Funds {
			e.Funds[i].Grant = d.str("fund grant")
			e.Funds[i].Amount = SU(d.u64("fund amount"))
		}
	}
	e.Detail.Runtime = time.Duration(d.u64("runtime"))
	if n := d.count("resources", 4); n > 0 {
		e.Detail.Resources = make([]string, n)
		for i := range e.Detail.Resources {
			e.Detail.Resources[i] = d.str("resource")
		}
	}
	e.Detail.Demand = d.floats("demand")
	e.Detail.Weights = d.floats("weights")
	if version == journalEncodingVersionRule {
		// Canonical: a sum-rule entry is always written as version 1.
		if e.Detail.Rule = BillingRule(d.u8("rule")); d.err == nil && (e.Detail.Rule == BillingSum || !e.Detail.Rule.Valid()) {
			d.err = fmt.Errorf("rule %d is not a version-2 billing rule", uint8(e.Detail.Rule))
		}
	}
	d.hash("prev_hash", &e.PrevHash)
	d.hash("hash", &e.Hash)
	if d.err == nil && d.off != len(d.buf) {
		d.err = fmt.Errorf("%d bytes left over after the hash", len(d.buf)-d.off)
	}
	if d.err != nil {
		return JournalEntry{}, d.err
	}
	return e, nil
}

func (d *entryDecoder) take(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.buf)-d.off {
		d.err = fmt.Errorf("%s: need %d bytes at offset %d, only %d left", field, n, d.off, len(d.buf)-d.off)
		return nil
	}
	b := d.buf[d.off : d.off+n]
	d.off += n
	return b
}

func (d *entryDecoder) u8(field string) uint8 {
	if b := d.take(field, 1); b != nil {
		return b[0]
	}
	return 0
}

func (d *entryDecoder) u64(field string) uint64 {
	if b := d.take(field, 8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// count reads a u32 element count and checks that that many elements of at
// least minSize bytes each can still follow.
func (d *entryDecoder) count(field string, minSize int) int {
	b := d.take(field+" count", 4)
	if b == nil {
		return 0
	}
	n := uint64(binary.BigEndian.Uint32(b))
	if left := uint64(len(d.buf) - d.off); n*uint64(minSize) > left {
		d.err = fmt.Errorf("%s: %d elements cannot fit in the %d bytes left", field, n, left)
		return 0
	}
	return int(n)
}

func (d *entryDecoder) str(field string) string {
	n := d.count(field, 1)
	return string(d.take(field, n))
}

func (d *entryDecoder) floats(field string) []float64 {
	n := d.count(field, 8)
	if n == 0 {
		return nil
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Float64frombits(d.u64(field))
	}
	return xs
}

func (d *entryDecoder) hash(field string, h *Hash) {
	copy(h[:], d.take(field, len(h)))
}
