package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// Group commit. Every Raft entry costs a disk sync on the leader, one on a
// quorum of followers and one for the FSM's commit; a client waits for all
// three in a row. Rather than one entry per proposal, the leader keeps a
// few entries in flight and puts every proposal that arrives meanwhile into
// the next one, as a multi-command entry (fsm.EncodeMulti): the busier the
// leader, the more each sync covers, and there is no timer anywhere — an
// idle leader sends a lone proposal at once, as a plain single-command
// entry.
const (
	// groupsInFlight is how many entries the leader has in the Raft
	// pipeline at once, and groupEarly how many proposals must be waiting
	// before another entry joins one in flight. Overlapping entries keeps
	// the stages busy (the leader syncs one while followers sync the one
	// before), but each entry costs every server a log commit and an FSM
	// commit — about the CPU of eight one-task submissions — and entries
	// in flight together slow each other down in those stages. So a group
	// smaller than groupEarly waits for the entry in flight to commit and
	// goes, bigger, in the next; a group of groupEarly or more is worth
	// its entry's cost at once. On the 64-client submission benchmark one
	// entry in flight did as well as any mix of 2 to 6 with thresholds of
	// 4 to 32, with the least CPU per submission and the shortest commits.
	groupsInFlight = 3
	groupEarly     = 64
	// maxGroupCommands bounds the commands of one entry.
	maxGroupCommands = 512
	// maxGroupBytes bounds one entry, so that a group never makes a large
	// append or replication message; a bigger command goes alone.
	maxGroupBytes = 1 << 20
)

// groupCommit is the queue of proposals waiting for an entry, and the
// goroutines that commit them. Its zero value is ready to use; it starts
// goroutines only while there is work, so it needs no shutdown: once Raft
// has shut down, every proposal fails at once and the goroutines end.
type groupCommit struct {
	mu    sync.Mutex
	queue []*proposal
	// flushers is the number of goroutines committing entries, at most
	// groupsInFlight.
	flushers int
}

// The states of a proposal. A caller whose context ends while its proposal
// is still queued takes it back (abandoned) and is told it was not
// applied; once a flusher has taken it, the caller waits for the outcome,
// because the write may commit.
const (
	proposalQueued uint32 = iota
	proposalTaken
	proposalAbandoned
)

// proposal is one encoded command waiting for its answer.
type proposal struct {
	data     []byte
	deadline time.Time // zero: none
	state    atomic.Uint32
	done     chan struct{}
	// resp and err are set before done is closed.
	resp any
	err  error
}

func (p *proposal) finish(resp any, err error) {
	p.resp, p.err = resp, err
	close(p.done)
}

// commit proposes one encoded command through the group and returns the
// FSM's answer for it (an *fsm.Result). queued, if not nil, is called once
// the command is in the queue: a proposal made after that goes into the
// same entry or a later one, and with one entry in flight (fewer than
// groupEarly proposals waiting) also commits after it.
func (g *groupCommit) commit(ctx context.Context, s *Server, data []byte, queued func()) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	p := &proposal{data: data, done: make(chan struct{})}
	p.deadline, _ = ctx.Deadline()
	g.mu.Lock()
	g.queue = append(g.queue, p)
	start := g.flushers == 0 || g.flushers < groupsInFlight && len(g.queue) >= groupEarly
	if start {
		g.flushers++
	}
	g.mu.Unlock()
	if queued != nil {
		queued()
	}
	if start {
		go g.flush(s)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		if p.state.CompareAndSwap(proposalQueued, proposalAbandoned) {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		// Taken: the entry is on its way and its outcome is bounded (it
		// commits, or the leader loses its lease and fails it, or Raft
		// shuts down). A write that commits is reported as done even if
		// the caller's deadline passed.
		<-p.done
	}
	return p.resp, p.err
}

// flush commits groups until the queue is empty.
func (g *groupCommit) flush(s *Server) {
	for {
		group := g.take()
		if len(group) == 0 {
			return
		}
		g.commitGroup(s, group)
	}
}

// take removes the next group from the queue, dropping abandoned
// proposals. It retires the calling flusher when there is nothing to send,
// or when another entry is in flight and fewer than groupEarly proposals
// wait: that flusher takes them when its entry has committed. It decides
// under the same lock that commit checks the count with, so queued
// proposals always have a flusher.
func (g *groupCommit) take() []*proposal {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.flushers > 1 && len(g.queue) < groupEarly {
		g.flushers--
		return nil
	}
	var group []*proposal
	size, n := 0, 0
	for ; n < len(g.queue); n++ {
		p := g.queue[n]
		if len(group) > 0 && (len(group) == maxGroupCommands || size+len(p.data) > maxGroupBytes) {
			break
		}
		if !p.state.CompareAndSwap(proposalQueued, proposalTaken) {
			continue
		}
		group = append(group, p)
		size += len(p.data)
	}
	rest := copy(g.queue, g.queue[n:])
	clear(g.queue[rest:])
	g.queue = g.queue[:rest]
	if len(group) == 0 {
		g.flushers--
	}
	return group
}

// commitGroup proposes a group as one entry and hands each proposal its
// own answer.
func (g *groupCommit) commitGroup(s *Server, group []*proposal) {
	data := group[0].data
	if len(group) > 1 {
		parts := make([][]byte, len(group))
		for i, p := range group {
			parts[i] = p.data
		}
		var err error
		if data, err = fsm.EncodeMulti(parts); err != nil {
			// Cannot happen within the group limits; say so rather than
			// guess.
			finishAll(group, nil, status.Errorf(codes.Internal, "group commit: %v", err))
			return
		}
	}
	start := time.Now()
	f := s.raft.Apply(data, enqueueTimeout(group))
	if err := f.Error(); err != nil {
		finishAll(group, nil, raftError(err))
		return
	}
	s.metrics.ObserveCommit(time.Since(start))
	resp := f.Response()
	if len(group) == 1 {
		group[0].finish(resp, nil)
		return
	}
	switch r := resp.(type) {
	case fsm.Results:
		if len(r) == len(group) {
			for i, p := range group {
				p.finish(r[i], nil)
			}
			return
		}
	case *fsm.Result:
		// The FSM answered the entry as a whole (it has stopped, or could
		// not split the entry): that answer is every command's.
		finishAll(group, r, nil)
		return
	}
	finishAll(group, nil, status.Errorf(codes.Internal, "group commit: the FSM answered %d commands with %T", len(group), resp))
}

func finishAll(group []*proposal, resp any, err error) {
	for _, p := range group {
		p.finish(resp, err)
	}
}

// enqueueTimeout is how long Raft may take to accept a group's entry: as
// long as the most patient caller in it allows.
func enqueueTimeout(group []*proposal) time.Duration {
	var longest time.Duration
	for _, p := range group {
		if p.deadline.IsZero() {
			return defaultApplyTimeout
		}
		longest = max(longest, time.Until(p.deadline))
	}
	return max(longest, time.Millisecond)
}
