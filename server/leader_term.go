package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/longfair/longfair/fsm"
)

// Timings of the leader's work with workers.
const (
	// workerHeartbeat is how often, at least, the leader and each worker
	// tell each other they are alive on the stream; heartbeatFor paces a
	// stream by the worker's fence timeout, up to maxWorkerHeartbeat (the
	// leader sets the interval for both in the welcome). The worker beats,
	// the leader echoes, and beats itself only in an interval it sent
	// nothing in. A stream silent for silentBeats intervals is closed.
	workerHeartbeat    = 500 * time.Millisecond
	maxWorkerHeartbeat = 2 * time.Second
	silentBeats        = 4
	// workerStreamGrace is how long a worker whose stream broke has to
	// reconnect before its node is marked down and its tasks requeued.
	workerStreamGrace = 2 * time.Second
	// workerTakeoverGrace is how long a new leader waits for the workers
	// of up nodes to connect before it marks their nodes down. (Their
	// attempts are lost only WorkerLossTimeout after the term started.)
	// A worker whose old leader hangs or is cut off finds out after
	// silentBeats of its heartbeats: up to 8s at the slowest pace. Waiting
	// that long costs nothing, since a pass places only on nodes whose
	// worker is connected, and spares every node a down and an up.
	workerTakeoverGrace = silentBeats*maxWorkerHeartbeat + 2*time.Second
	// helloTimeout bounds the wait for a worker's first message.
	helloTimeout = 10 * time.Second
	// passInterval is how often the leader schedules without a trigger:
	// fairness moves with time even when nothing happens.
	passInterval = time.Second
	// minPassGap rate-limits passes: triggers that arrive while a pass
	// runs, or within this gap after it, are served by one more pass.
	minPassGap = 2 * time.Millisecond
	// sweepInterval is how often the leader re-checks that every worker
	// holds the attempts the ledger placed on its node.
	sweepInterval = time.Second
	// membersInterval is how often node up/down is re-checked.
	membersInterval = 250 * time.Millisecond
)

// workerHub is the server's door to its leader term: the gRPC handlers of
// the Workers service find the current term through it. Its zero value
// has no term (the server does not lead).
type workerHub struct {
	mu   sync.Mutex
	term *leaderTerm
}

func (h *workerHub) current() *leaderTerm {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.term
}

func (h *workerHub) set(t *leaderTerm) {
	h.mu.Lock()
	h.term = t
	h.mu.Unlock()
}

// leaderTerm is the leader's work with workers for one term of
// leadership: the worker streams, the scheduling loop, the task-event
// committer and the membership loop. Everything it knows beyond the FSM
// (streams, delivery records) is rebuilt by the next leader from the FSM
// and the workers' hellos.
type leaderTerm struct {
	s       *Server
	log     *slog.Logger
	ctx     context.Context
	started time.Time

	mu      sync.Mutex
	conns   map[string]*workerConn // by node id: the current stream of each worker
	lostAt  map[string]time.Time   // when a node's stream ended, until it is marked down or reconnects
	heardAt map[string]time.Time   // the last message on that stream: when the worker was last known alive
	goodbye map[string]string      // nodes whose worker said goodbye, with its reason
	// heardAt stays after a node went down while its attempts wait to be
	// lost (leader_nodes.go); fencedWithin is what each worker's hello in
	// this term said about when it fences them.
	fencedWithin map[string]time.Duration
	// warned records, per node, the last problem logged, so that a
	// condition that lasts is logged once.
	warned map[string]string

	jobs *jobSpecs
	// ending are the task ends the event committer has queued for the
	// log and not yet seen commit: passes schedule as if they had applied.
	ending endingEvents

	events   chan eventBatch
	schedule chan struct{}
	members  chan struct{}
	sweeps   chan bool // true: also kill attempts of cancelled jobs
}

// startWorkerLeadership starts the leader's work with workers; the
// function it returns stops it and waits until it has stopped. The server
// calls it once it leads and has applied everything committed before.
func (s *Server) startWorkerLeadership(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	t := &leaderTerm{
		s: s, log: s.logger.With("component", "leader"), ctx: ctx, started: time.Now(),
		conns: make(map[string]*workerConn), lostAt: make(map[string]time.Time), heardAt: make(map[string]time.Time),
		goodbye: make(map[string]string), warned: make(map[string]string), fencedWithin: make(map[string]time.Duration),
		jobs:     newJobSpecs(s.fsm),
		events:   make(chan eventBatch, 256),
		schedule: make(chan struct{}, 1),
		members:  make(chan struct{}, 1),
		sweeps:   make(chan bool, 1),
	}
	var wg sync.WaitGroup
	for _, loop := range []func(){t.scheduleLoop, t.eventsLoop, t.membershipLoop, t.sweepLoop, t.fawkesLoop} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop()
		}()
	}
	s.hub.set(t)
	return func() {
		s.hub.set(nil)
		cancel()
		wg.Wait()
	}
}

// kick sends a token on a trigger channel without blocking.
func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// requestSweep asks the sweep loop for a pass; withCancel adds the check
// for attempts of cancelled jobs.
func (t *leaderTerm) requestSweep(withCancel bool) {
	select {
	case t.sweeps <- withCancel:
	default:
		if withCancel {
			// A plain sweep is pending; make sure the cancel check is not lost.
			go func() {
				select {
				case t.sweeps <- true:
				case <-t.ctx.Done():
				}
			}()
		}
	}
}

// register makes c the current stream of its node, closing the one it
// replaces: the same worker process (the same session) reconnecting after
// its old stream broke, or a new process after the old stream went
// silent or closed. While another process's stream for the node is alive
// it refuses c instead, changing nothing: two workers started with the
// same node id would otherwise take the stream from each other in turn,
// and lose the attempts each was sent.
func (t *leaderTerm) register(c *workerConn) error {
	now := time.Now()
	t.mu.Lock()
	old := t.conns[c.node]
	if old != nil && old.session != c.session && old.alive(now) {
		t.mu.Unlock()
		// Once per refused address: the refused worker asks again every
		// few seconds.
		t.warnOnce(c.node, "held-from-"+c.from, fmt.Sprintf(
			"refused a worker stream from %s: the worker at %s holds this node; two workers run with the same --node-id", c.from, old.from))
		return status.Errorf(codes.AlreadyExists,
			"another worker already holds node %s, from %s (connected %v ago, heard from %v ago): two workers cannot share a node id; "+
				"check --node-id, give this worker its own, or stop the other one first",
			c.node, old.from, now.Sub(old.since).Round(time.Millisecond), now.Sub(time.Unix(0, old.lastHeard.Load())).Round(time.Millisecond))
	}
	t.conns[c.node] = c
	if c.fencedWithin > 0 {
		t.fencedWithin[c.node] = c.fencedWithin
	} else {
		delete(t.fencedWithin, c.node)
	}
	delete(t.lostAt, c.node)
	delete(t.heardAt, c.node)
	delete(t.goodbye, c.node)
	delete(t.warned, c.node)
	t.mu.Unlock()
	if old != nil {
		old.close("the worker opened a new stream")
	}
	return nil
}

// unregister forgets c if it is still its node's current stream.
func (t *leaderTerm) unregister(c *workerConn) {
	t.mu.Lock()
	if t.conns[c.node] == c {
		delete(t.conns, c.node)
		t.lostAt[c.node] = time.Now()
		t.heardAt[c.node] = time.Unix(0, c.lastHeard.Load())
	}
	t.mu.Unlock()
	kick(t.members)
}

// conn returns the ready stream of a node, or nil.
func (t *leaderTerm) conn(node string) *workerConn {
	t.mu.Lock()
	c := t.conns[node]
	t.mu.Unlock()
	if c == nil || !c.isReady() {
		return nil
	}
	return c
}

// readyConns returns the streams that are reconciled and take assignments.
func (t *leaderTerm) readyConns() []*workerConn {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*workerConn, 0, len(t.conns))
	for _, c := range t.conns {
		if c.isReady() {
			out = append(out, c)
		}
	}
	return out
}

// jobSpecs caches what an assignment needs from a job. A job's command,
// demand, account, user, directory and environment never change after
// submission, so a cached copy of them is never stale. Its walltime and
// name may (UpdateJob): an assignment takes its walltime from the attempt
// (fsm.PlacedTask.Limit, fsm.TaskInfo.Limit), and a renamed job's tasks
// may start under the name it was cached with.
type jobSpecs struct {
	f  *fsm.FSM
	mu sync.Mutex
	m  map[uint64]fsm.JobInfo
}

// maxCachedJobs bounds the cache; it is emptied when full.
const maxCachedJobs = 4096

func newJobSpecs(f *fsm.FSM) *jobSpecs { return &jobSpecs{f: f, m: make(map[uint64]fsm.JobInfo)} }

func (j *jobSpecs) get(id uint64) (fsm.JobInfo, error) {
	j.mu.Lock()
	info, ok := j.m[id]
	j.mu.Unlock()
	if ok {
		return info, nil
	}
	info, err := j.f.Job(id)
	if err != nil {
		return fsm.JobInfo{}, err
	}
	j.mu.Lock()
	if len(j.m) >= maxCachedJobs {
		clear(j.m)
	}
	j.m[id] = info
	j.mu.Unlock()
	return info, nil
}
