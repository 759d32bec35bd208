package sim

import "github.com/longfair/longfair/ledger"

// event is a pending change at a future time: a group of tasks ending, or a
// dependent job being submitted.
type event struct {
	at      ledger.Time
	seq     uint64 // breaks ties in creation order, so replays are deterministic
	started ledger.Time
	job     int32
	node    int32
	count   int32
	// gang, when positive, says the task spans the nodes of
	// replay.gangs[gang-1] (node is then its head, count 1).
	gang int32
	kind eventKind
}

type eventKind uint8

const (
	evEnd eventKind = iota
	evArrive
)

// eventHeap is a binary min-heap of events by (at, seq), written out rather
// than through container/heap to keep interface calls off the hot path.
type eventHeap struct {
	items []event
	seq   uint64
}

func (h *eventHeap) len() int { return len(h.items) }

func (h *eventHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(e event) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *eventHeap) top() *event { return &h.items[0] }

func (h *eventHeap) pop() event {
	e := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= last {
			break
		}
		m := l
		if r := l + 1; r < last && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return e
}
