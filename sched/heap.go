package sched

// rankHeap is a binary min-heap of candidate accounts ordered by their rank
// key. Only the account just served changes its key within a pass, so a pass
// costs O(log accounts) per placement instead of a scan of every account.
type rankHeap struct {
	keys  []rankKey // by account index
	items []int     // heap of account indices
	pos   []int     // account index → position in items, −1 when absent
}

func (h *rankHeap) reset(accounts int) {
	h.keys = resize(h.keys, accounts)
	if len(h.pos) == accounts {
		// Only the accounts still in the heap have a position (push,
		// swap and remove keep it so): a pass's heap is mostly empty at
		// its end, and most accounts were never in it.
		for _, a := range h.items {
			h.pos[a] = -1
		}
	} else {
		h.pos = resize(h.pos, accounts)
		for i := range h.pos {
			h.pos[i] = -1
		}
	}
	h.items = h.items[:0]
}

func (h *rankHeap) push(account int, k rankKey) {
	h.keys[account] = k
	h.pos[account] = len(h.items)
	h.items = append(h.items, account)
	h.up(len(h.items) - 1)
}

func (h *rankHeap) len() int { return len(h.items) }

// top is the first-ranked account; the heap must not be empty.
func (h *rankHeap) top() int { return h.items[0] }

// update changes an account's key and restores heap order.
func (h *rankHeap) update(account int, k rankKey) {
	h.keys[account] = k
	i := h.pos[account]
	h.up(i)
	h.down(h.pos[account])
}

// remove drops an account from the heap.
func (h *rankHeap) remove(account int) {
	i := h.pos[account]
	last := len(h.items) - 1
	h.swap(i, last)
	h.items = h.items[:last]
	h.pos[account] = -1
	if i < last {
		moved := h.items[i]
		h.up(i)
		h.down(h.pos[moved])
	}
}

func (h *rankHeap) less(i, j int) bool { return h.keys[h.items[i]].less(h.keys[h.items[j]]) }

func (h *rankHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = i
	h.pos[h.items[j]] = j
}

func (h *rankHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *rankHeap) down(i int) {
	n := len(h.items)
	for {
		smallest := i
		if l := 2*i + 1; l < n && h.less(l, smallest) {
			smallest = l
		}
		if r := 2*i + 2; r < n && h.less(r, smallest) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h.swap(i, smallest)
		i = smallest
	}
}

// resize returns s with length n, reusing its storage when it is big enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
