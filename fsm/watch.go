package fsm

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Changes is a set of command types, one bit per CommandType.
type Changes uint64

// Has reports whether commands of type t were applied.
func (c Changes) Has(t CommandType) bool { return c&(1<<t) != 0 }

// Watcher tells its owner that the FSM applied commands, without ever
// holding up an apply: the leader's scheduling loop waits on C and then
// reads what it needs, off the Raft apply path. Create one with Watch and
// stop it with Close.
type Watcher struct {
	f  *FSM
	ch chan struct{}

	mu      sync.Mutex
	pending Changes
}

// Watch returns a watcher that is signalled after every batch of applied
// entries that held a command.
func (f *FSM) Watch() *Watcher {
	w := &Watcher{f: f, ch: make(chan struct{}, 1)}
	f.watchMu.Lock()
	if f.watchers == nil {
		f.watchers = make(map[*Watcher]struct{})
	}
	f.watchers[w] = struct{}{}
	f.watchMu.Unlock()
	return w
}

// C receives a token when commands were applied since the last Take.
// Tokens do not queue up: one stands for any number of batches.
func (w *Watcher) C() <-chan struct{} { return w.ch }

// Take returns the command types applied since the last Take and forgets them.
func (w *Watcher) Take() Changes {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.pending
	w.pending = 0
	return c
}

// Close stops the watcher; it receives nothing more.
func (w *Watcher) Close() {
	w.f.watchMu.Lock()
	delete(w.f.watchers, w)
	w.f.watchMu.Unlock()
}

func (w *Watcher) signal(c Changes) {
	w.mu.Lock()
	w.pending |= c
	w.mu.Unlock()
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// notifyWatchers signals every watcher with the types of the command
// entries in logs. It is called after the batch committed.
func (f *FSM) notifyWatchers(logs []*raft.Log) {
	var c Changes
	for _, l := range logs {
		if l.Type == raft.LogCommand {
			c |= entryChanges(l.Data)
		}
	}
	if c == 0 {
		return
	}
	f.watchMu.Lock()
	defer f.watchMu.Unlock()
	for w := range f.watchers {
		w.signal(c)
	}
}
