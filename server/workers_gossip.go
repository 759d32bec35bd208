package server

import (
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// roleWorker is the role workers advertise in their WorkerAdvert.
const roleWorker = "worker"

// workerMember is a worker as this server's gossip member sees it.
type workerMember struct {
	Advert *longfairv1.WorkerAdvert
	// State is memberAlive, memberLeft (a graceful leave) or memberFailed
	// (declared dead by the pool's failure detector).
	State string
	Since time.Time
}

const (
	memberAlive  = "alive"
	memberLeft   = "left"
	memberFailed = "failed"
)

// workerTable holds the workers of the gossip pool. Its zero value is
// ready to use: the gossip delegate feeds it from memberlist's events, and
// the leader's membership loop turns it into node up/down commands.
type workerTable struct {
	mu      sync.Mutex
	members map[string]workerMember
	subs    map[chan struct{}]struct{}
}

// observe records a member that joined or changed; members that are not
// workers are ignored.
func (t *workerTable) observe(n *memberlist.Node) {
	var ad longfairv1.WorkerAdvert
	if proto.Unmarshal(n.Meta, &ad) != nil || ad.GetRole() != roleWorker || ad.GetVersion() != 1 || ad.GetNodeId() != n.Name {
		return
	}
	t.set(n.Name, workerMember{Advert: &ad, State: memberAlive, Since: time.Now()})
}

// leave records that a worker left or was declared dead.
func (t *workerTable) leave(n *memberlist.Node) {
	t.mu.Lock()
	m, ok := t.members[n.Name]
	t.mu.Unlock()
	if !ok {
		return
	}
	m.State, m.Since = memberFailed, time.Now()
	if n.State == memberlist.StateLeft {
		m.State = memberLeft
	}
	t.set(n.Name, m)
}

func (t *workerTable) set(id string, m workerMember) {
	t.mu.Lock()
	if t.members == nil {
		t.members = make(map[string]workerMember)
	}
	old, had := t.members[id]
	t.members[id] = m
	changed := !had || old.State != m.State || !proto.Equal(old.Advert, m.Advert)
	if changed {
		for ch := range t.subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	t.mu.Unlock()
}

// get returns what gossip knows of a worker.
func (t *workerTable) get(id string) (workerMember, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.members[id]
	return m, ok
}

// subscribe returns a channel that gets a token when a worker joins,
// changes, leaves or fails.
func (t *workerTable) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	t.mu.Lock()
	if t.subs == nil {
		t.subs = make(map[chan struct{}]struct{})
	}
	t.subs[ch] = struct{}{}
	t.mu.Unlock()
	return ch
}

func (t *workerTable) unsubscribe(ch chan struct{}) {
	t.mu.Lock()
	delete(t.subs, ch)
	t.mu.Unlock()
}
