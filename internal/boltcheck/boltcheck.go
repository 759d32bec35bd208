// Package boltcheck opens the servers' bbolt files at start-up so that a
// damaged file is refused with an error naming it and saying what to do,
// instead of crashing the process with a Go panic or a fault.
//
// bbolt trusts its file: a page it cannot parse panics, and a page past
// the end of a truncated file faults (SIGBUS) when bbolt touches its
// memory map, which no recover catches. So, before bbolt maps a file,
// Precheck reads its two meta pages itself and refuses a file shorter than
// the pages the newest valid meta page counts; then Guard runs bbolt's
// open, first reads and consistency check (Check) with faults turned into
// panics and panics into errors. A file damaged later, while the server
// runs, can still crash it inside bbolt; start-up at least is clean, and
// the FSM's digest checks find damage bbolt cannot see (a changed value in
// a well-formed page).
package boltcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// CorruptError is a damaged bbolt file: what was wrong with which file,
// and what the operator should do about it.
type CorruptError struct {
	// Path is the damaged file.
	Path string
	// Problem says what is wrong with it.
	Problem string
	// Remedy says what to do.
	Remedy string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is damaged (%s): %s", e.Path, e.Problem, e.Remedy)
}

// ErrCorrupt is what every *CorruptError matches with errors.Is.
var ErrCorrupt = errors.New("damaged data file")

// Is makes errors.Is(err, ErrCorrupt) true for a *CorruptError.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// The layout of a bbolt meta page (go.etcd.io/bbolt/internal/common): a
// 16-byte page header, then magic, version, page size, flags (4 bytes
// each), the root bucket (root page id, sequence), the freelist page id,
// the high-water page id, the transaction id, and an FNV-64a checksum of
// everything before it.
const (
	pageHeaderSize = 16
	metaMagic      = 0xED0CDAED
	metaVersion    = 2
	metaSize       = 64
	metaSumOffset  = 56
)

type meta struct {
	pageSize uint32
	pgid     uint64
	txid     uint64
}

// readMeta parses and checks the meta page at off; ok is false when the
// page is not a valid meta page.
func readMeta(r io.ReaderAt, off int64) (meta, bool) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		return meta{}, false
	}
	m := buf[pageHeaderSize:]
	le := binary.LittleEndian
	if le.Uint32(m[0:]) != metaMagic || le.Uint32(m[4:]) != metaVersion {
		return meta{}, false
	}
	h := fnv.New64a()
	h.Write(m[:metaSumOffset])
	if h.Sum64() != le.Uint64(m[metaSumOffset:]) {
		return meta{}, false
	}
	return meta{pageSize: le.Uint32(m[8:]), pgid: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, true
}

// Precheck refuses, before bbolt maps it, a file whose meta pages are both
// invalid, that is shorter than the pages its newest meta page counts (a
// truncated file, which bbolt would fault on), or whose pages do not form
// the tree that meta page describes (which bbolt would panic on, in
// goroutines of its own when it rebuilds an unsynced freelist). It reads
// the file with plain reads, never through a memory map. A missing or
// empty file passes: bbolt creates it.
func Precheck(path, remedy string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	m0, ok0 := readMeta(f, 0)
	var best meta
	var bestOff int64
	var found bool
	if ok0 {
		best, found = m0, true
	}
	// The second meta page is one page in; its size comes from the first
	// when that is valid, otherwise every size bbolt may have used is tried.
	sizes := []int64{4096, 8192, 16384, 32768, 65536}
	if ok0 {
		sizes = []int64{int64(m0.pageSize)}
	}
	for _, ps := range sizes {
		if m1, ok := readMeta(f, ps); ok && int64(m1.pageSize) == ps {
			if !found || m1.txid > best.txid {
				best, bestOff, found = m1, ps, true
			}
			break
		}
	}
	if !found {
		return &CorruptError{Path: path, Problem: "neither of its two meta pages is valid: it is not a bbolt file or its header was overwritten", Remedy: remedy}
	}
	if need := int64(best.pgid) * int64(best.pageSize); size < need {
		return &CorruptError{Path: path, Problem: fmt.Sprintf("it is %d bytes but its last transaction uses %d: it was truncated", size, need), Remedy: remedy}
	}
	page := make([]byte, pageHeaderSize+metaSize)
	if _, err := f.ReadAt(page, bestOff); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := walk(f, size, best, page); err != nil {
		return &CorruptError{Path: path, Problem: err.Error(), Remedy: remedy}
	}
	return nil
}

// Guard runs fn, which opens and first reads a bbolt file, turning a bbolt
// panic or a memory fault inside it into a *CorruptError for path. It is
// for start-up only: the fault setting covers this goroutine alone.
func Guard(path, remedy string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = &CorruptError{Path: path, Problem: fmt.Sprintf("reading it failed: %v", p), Remedy: remedy}
		}
	}()
	return fn()
}

// Check runs bbolt's consistency check (every reachable page parsed, no
// page both used and free, none lost) in tx and returns its first
// findings as a *CorruptError.
func Check(tx *bolt.Tx, path, remedy string) error {
	var problems []string
	n := 0
	for err := range tx.Check() {
		if n++; n <= 3 {
			problems = append(problems, err.Error())
		}
	}
	if n > 0 {
		return &CorruptError{Path: path, Problem: fmt.Sprintf("bbolt's consistency check found %d problems: %s", n, strings.Join(problems, "; ")), Remedy: remedy}
	}
	return nil
}
