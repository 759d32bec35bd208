package boltcheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// The page layout bbolt writes (go.etcd.io/bbolt/internal/common/page.go):
// a 16-byte header (id, flags, count, overflow), then count 16-byte
// elements. A branch element is (pos, key size, child page id); a leaf
// element is (flags, pos, key size, value size); pos counts from the
// element itself. A leaf element flagged as a bucket holds the bucket's
// root page id and sequence, followed by the bucket's page itself when the
// root id is 0 (an inline bucket).
const (
	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01
	elementSize      = 16
	inBucketSize     = 16
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64
)

// walker reads a bbolt file through ReadAt and checks every page the
// newest meta page reaches, with every offset bounds-checked, so that it
// finds what would make bbolt panic (a page that is not the one expected,
// an unknown page type, an element outside its page, keys out of order,
// which make bbolt's own check look up a bucket it then cannot find)
// without ever trusting the file.
type walker struct {
	r    io.ReaderAt
	size int64
	ps   int64
	hw   uint64 // the high-water page id: pages at or above it are unused
	seen map[uint64]bool
	bufs [][]byte // one page buffer per tree depth (page)
}

// walk checks the page tree and the freelist that m describes.
func walk(r io.ReaderAt, size int64, m meta, metaPage []byte) error {
	w := &walker{r: r, size: size, ps: int64(m.pageSize), hw: m.pgid, seen: map[uint64]bool{0: true, 1: true}}
	le := binary.LittleEndian
	body := metaPage[pageHeaderSize:]
	if fl := le.Uint64(body[32:]); fl != noFreelist {
		if err := w.freelist(fl); err != nil {
			return err
		}
	}
	return w.tree(le.Uint64(body[16:]), 0, nil, nil)
}

// inRange reports whether k may follow prev (unless first) in a page whose
// keys lie in [lo, hi): at least lo when set, less than hi when set,
// strictly increasing.
func inRange(k, prev, lo, hi []byte, first bool) bool {
	if !first && bytes.Compare(k, prev) <= 0 {
		return false
	}
	if lo != nil && bytes.Compare(k, lo) < 0 {
		return false
	}
	return hi == nil || bytes.Compare(k, hi) < 0
}

// page reads page id with its overflow pages and checks its header. The
// bytes are in a buffer kept for depth: valid until the next page read at
// the same depth, so a branch's keys outlive the walk of its children.
func (w *walker) page(id uint64, depth int) ([]byte, error) {
	if id < 2 || id >= w.hw {
		return nil, fmt.Errorf("a reference to page %d, outside the file's pages 2–%d", id, w.hw-1)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d is referenced twice", id)
	}
	w.seen[id] = true
	buf := w.buffer(depth, w.ps)
	if _, err := w.r.ReadAt(buf, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("read page %d: %v", id, err)
	}
	le := binary.LittleEndian
	if got := le.Uint64(buf[0:]); got != id {
		return nil, fmt.Errorf("page %d identifies itself as page %d", id, got)
	}
	overflow := uint64(le.Uint32(buf[12:]))
	if overflow == 0 {
		return buf, nil
	}
	if id+overflow >= w.hw {
		return nil, fmt.Errorf("page %d runs %d pages past the file's last page", id, id+overflow-w.hw+1)
	}
	buf = w.buffer(depth, int64(overflow+1)*w.ps)
	if _, err := w.r.ReadAt(buf, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("read page %d: %v", id, err)
	}
	for o := uint64(1); o <= overflow; o++ {
		w.seen[id+o] = true
	}
	return buf, nil
}

// buffer returns depth's buffer, n bytes long.
func (w *walker) buffer(depth int, n int64) []byte {
	for len(w.bufs) <= depth {
		w.bufs = append(w.bufs, nil)
	}
	if int64(cap(w.bufs[depth])) < n {
		w.bufs[depth] = make([]byte, n)
	}
	return w.bufs[depth][:n]
}

func (w *walker) freelist(id uint64) error {
	p, err := w.page(id, 0)
	if err != nil {
		return fmt.Errorf("freelist: %v", err)
	}
	le := binary.LittleEndian
	if flags := le.Uint16(p[8:]); flags != freelistPageFlag {
		return fmt.Errorf("freelist page %d has page type %#x", id, flags)
	}
	n, ids := uint64(le.Uint16(p[10:])), p[pageHeaderSize:]
	if n == 0xFFFF {
		n, ids = le.Uint64(ids), ids[8:]
	}
	if n > uint64(len(ids))/8 {
		return fmt.Errorf("freelist page %d lists %d pages, more than it can hold", id, n)
	}
	for i := range n {
		if f := le.Uint64(ids[8*i:]); f < 2 || f >= w.hw {
			return fmt.Errorf("freelist page %d lists page %d, outside the file's pages", id, f)
		}
	}
	return nil
}

// tree checks the B+tree rooted at page id, whose keys lie in [lo, hi),
// and every bucket under it.
func (w *walker) tree(id uint64, depth int, lo, hi []byte) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("page %d is %d levels deep: the tree loops", id, depth)
	}
	p, err := w.page(id, depth)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	switch flags := le.Uint16(p[8:]); flags {
	case branchPageFlag:
		n := int(le.Uint16(p[10:]))
		keys := make([][]byte, n)
		for i := range n {
			off := pageHeaderSize + i*elementSize
			if off+elementSize > len(p) {
				return fmt.Errorf("branch page %d: element %d lies outside the page", id, i)
			}
			pos, ksize := int(le.Uint32(p[off:])), int(le.Uint32(p[off+4:]))
			if off+pos+ksize > len(p) || off+pos < off {
				return fmt.Errorf("branch page %d: key %d lies outside the page", id, i)
			}
			keys[i] = p[off+pos : off+pos+ksize]
			// The first key of a branch may be below the range: it is
			// the smallest key its child held when it was written.
			if i > 0 && !inRange(keys[i], keys[i-1], lo, hi, false) || i == 0 && hi != nil && bytes.Compare(keys[0], hi) >= 0 {
				return fmt.Errorf("branch page %d: key %d is out of order", id, i)
			}
		}
		for i := range n {
			clo, chi := keys[i], hi
			if i == 0 {
				clo = lo
			}
			if i+1 < n {
				chi = keys[i+1]
			}
			if err := w.tree(le.Uint64(p[pageHeaderSize+i*elementSize+8:]), depth+1, clo, chi); err != nil {
				return err
			}
		}
		return nil
	case leafPageFlag:
		return w.leaf(p, fmt.Sprintf("leaf page %d", id), depth, lo, hi)
	default:
		return fmt.Errorf("page %d has page type %#x where a branch or leaf page belongs", id, flags)
	}
}

// leaf checks the elements of a leaf page p (a whole page, or an inline
// bucket's page inside a value) and the buckets they hold.
func (w *walker) leaf(p []byte, what string, depth int, lo, hi []byte) error {
	le := binary.LittleEndian
	if len(p) < pageHeaderSize {
		return fmt.Errorf("%s is shorter than a page header", what)
	}
	n := int(le.Uint16(p[10:]))
	var prev []byte
	for i := range n {
		off := pageHeaderSize + i*elementSize
		if off+elementSize > len(p) {
			return fmt.Errorf("%s: element %d lies outside the page", what, i)
		}
		flags, pos := le.Uint32(p[off:]), int(le.Uint32(p[off+4:]))
		ksize, vsize := int(le.Uint32(p[off+8:])), int(le.Uint32(p[off+12:]))
		start := off + pos
		if start < off || start+ksize+vsize > len(p) || start+ksize+vsize < start {
			return fmt.Errorf("%s: key or value %d lies outside the page", what, i)
		}
		k := p[start : start+ksize]
		if !inRange(k, prev, lo, hi, i == 0) {
			return fmt.Errorf("%s: key %d is out of order", what, i)
		}
		prev = k
		if flags&bucketLeafFlag == 0 {
			continue
		}
		v := p[start+ksize : start+ksize+vsize]
		if len(v) < inBucketSize {
			return fmt.Errorf("%s: bucket %d has a %d-byte header", what, i, len(v))
		}
		if root := le.Uint64(v); root != 0 {
			if err := w.tree(root, depth+1, nil, nil); err != nil {
				return err
			}
			continue
		}
		inline := v[inBucketSize:]
		if len(inline) < pageHeaderSize || le.Uint16(inline[8:]) != leafPageFlag {
			return fmt.Errorf("%s: inline bucket %d is not a leaf page", what, i)
		}
		if depth > maxTreeDepth {
			return fmt.Errorf("%s: buckets nest too deep", what)
		}
		if err := w.leaf(inline, what+" (inline bucket)", depth+1, nil, nil); err != nil {
			return err
		}
	}
	return nil
}
