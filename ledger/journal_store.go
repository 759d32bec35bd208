package ledger

// journalChunkSize is how many entries one chunk of the in-memory journal
// holds. Chunks are never reallocated, so appending never copies the
// entries already written, however long the journal grows.
const journalChunkSize = 4096

// journalStore is the book's in-memory journal: append-only, addressed by
// index (Seq − 1).
type journalStore struct {
	chunks [][]JournalEntry
	n      int
}

func (s *journalStore) len() int { return s.n }

// at returns the entry at index i, which must be < len.
func (s *journalStore) at(i int) *JournalEntry {
	return &s.chunks[i/journalChunkSize][i%journalChunkSize]
}

// last returns the last entry, or nil when the journal is empty.
func (s *journalStore) last() *JournalEntry {
	if s.n == 0 {
		return nil
	}
	return s.at(s.n - 1)
}

func (s *journalStore) append(e JournalEntry) int {
	if s.n%journalChunkSize == 0 {
		s.chunks = append(s.chunks, make([]JournalEntry, 0, journalChunkSize))
	}
	c := &s.chunks[len(s.chunks)-1]
	*c = append(*c, e)
	s.n++
	return s.n - 1
}
