package ledger

import (
	"crypto/sha256"
	"fmt"
)

// journalChunkBytes is the size of one chunk of the in-memory journal's
// encoded entries. Chunks are never reallocated, so appending never
// copies the entries already written, however long the journal grows.
const journalChunkBytes = 1 << 20

// journalSpanChunk is how many entries' spans one span chunk holds.
const journalSpanChunk = 1 << 14

// journalStore is the book's journal: append-only, addressed by index
// (Seq − 1).
//
// It keeps each entry in its canonical encoding (journal_encoding.go), in
// chunks of bytes, rather than as JournalEntry values. An entry's strings
// and slices are pointers the garbage collector would trace on every
// cycle, for every entry ever written: with 100,000 jobs queued they were
// a fifth of what each cycle marked, and with a centre-year of history
// most of the heap. Bytes hold no pointers, so the collector skips them,
// and the encoding is also about half the size of the value it encodes.
// Reading an entry decodes it, which the book does only to answer a
// retry, a listing or a verification; the last entry, which every append
// reads, is kept decoded.
//
// An entry's prev_hash is the hash of the entry before it, so the store
// leaves it out and puts it back when it reads the entry.
//
// A book whose entries are also stored elsewhere (the FSM's state file)
// can forget them (SUBook.KeepJournalIn): the entries before base are then
// read back through read, and memory holds only those appended since.
type journalStore struct {
	chunks [][]byte
	spans  [][]journalSpan
	n      int
	tail   JournalEntry // the last entry, decoded; valid when n > 0

	base     int  // entries before it are not held: read them through read
	baseHash Hash // the hash of entry base−1
	read     func(seq uint64) ([]byte, error)
	spare    []journalSpan // an emptied span chunk to reuse
}

// journalSpan is where one entry's encoding, less its prev_hash, lies:
// chunks[chunk][off:off+len], the entry's hash its last bytes.
type journalSpan struct{ chunk, off, len uint32 }

// held returns the bytes the store holds for entry i (base ≤ i < n).
func (s *journalStore) held(i int) []byte {
	j := i - s.base
	sp := s.spans[j/journalSpanChunk][j%journalSpanChunk]
	return s.chunks[sp.chunk][sp.off : sp.off+sp.len]
}

func (s *journalStore) len() int { return s.n }

// at returns a copy of the entry at index i, which must be < len. The
// copy shares nothing with the store. Only an entry read back from where
// it was stored can fail.
func (s *journalStore) at(i int) (JournalEntry, error) {
	var e JournalEntry
	if i < s.base {
		data, err := s.read(uint64(i) + 1)
		if err == nil {
			err = e.UnmarshalBinary(data)
		}
		if err == nil && e.Seq != uint64(i)+1 {
			err = fmt.Errorf("it holds entry %d", e.Seq)
		}
		if err != nil {
			return JournalEntry{}, fmt.Errorf("read SU journal entry %d back: %w", i+1, err)
		}
		return e, nil
	}
	const h = len(Hash{})
	raw := s.held(i)
	prev := s.baseHash[:]
	if i > s.base {
		before := s.held(i - 1)
		prev = before[len(before)-h:]
	}
	enc := make([]byte, 0, len(raw)+h)
	enc = append(append(append(enc, raw[:len(raw)-h]...), prev...), raw[len(raw)-h:]...)
	if err := e.UnmarshalBinary(enc); err != nil {
		// Only the store writes these bytes, each the encoding of an
		// entry; the encoding's round trip is fuzzed (journal_fuzz_test.go).
		panic(fmt.Sprintf("ledger: journal entry %d does not decode from its own encoding: %v", i+1, err))
	}
	return e, nil
}

// last returns the last entry, or nil when the journal is empty. The
// entry is the store's: read it, do not keep or change it.
func (s *journalStore) last() *JournalEntry {
	if s.n == 0 {
		return nil
	}
	return &s.tail
}

// append numbers e as the next entry, chains it to the last one, hashes
// it and adds it; it returns e's index.
func (s *journalStore) append(e JournalEntry) int {
	e.Seq = uint64(s.n) + 1
	e.PrevHash = Hash{}
	if s.n > 0 {
		e.PrevHash = s.tail.Hash
	}
	size := e.encodedSizeHint()
	if len(s.chunks) == 0 || cap(s.chunks[len(s.chunks)-1])-len(s.chunks[len(s.chunks)-1]) < size {
		s.chunks = append(s.chunks, make([]byte, 0, max(journalChunkBytes, size)))
	}
	c := &s.chunks[len(s.chunks)-1]
	off := len(*c)
	*c = e.appendBody(*c)
	e.Hash = sha256.Sum256((*c)[off:])
	// The body ends with prev_hash: the hash takes its place.
	*c = append((*c)[:len(*c)-len(e.PrevHash)], e.Hash[:]...)
	if (s.n-s.base)%journalSpanChunk == 0 {
		next := s.spare
		if next == nil {
			next = make([]journalSpan, 0, journalSpanChunk)
		}
		s.spans, s.spare = append(s.spans, next), nil
	}
	sp := &s.spans[len(s.spans)-1]
	*sp = append(*sp, journalSpan{chunk: uint32(len(s.chunks) - 1), off: uint32(off), len: uint32(len(*c) - off)})
	// e is the book's own (its slices are made for it), so the tail can
	// keep them.
	s.tail = e
	s.n++
	return s.n - 1
}

// forget drops every entry held: from now on they are read through read.
// It keeps the first chunk and span chunk for the entries to come.
func (s *journalStore) forget(read func(seq uint64) ([]byte, error)) {
	s.read = read
	if s.n == s.base {
		return
	}
	s.base, s.baseHash = s.n, s.tail.Hash
	var chunk []byte
	if len(s.chunks) > 0 {
		chunk, s.spare = s.chunks[0][:0], s.spans[0][:0]
	}
	// Cleared, so the slices' arrays no longer reach the dropped chunks.
	clear(s.chunks)
	clear(s.spans)
	s.chunks, s.spans = s.chunks[:0], s.spans[:0]
	if chunk != nil {
		s.chunks = append(s.chunks, chunk)
	}
}
