package server

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Assignments are sent once per stream, in messages that stay well under
// gRPC's message limit whatever the size of the commands.
func TestDeliverSendsOnceInBoundedMessages(t *testing.T) {
	c := &workerConn{ready: true, delivered: map[attemptKey]time.Time{}, outSig: make(chan struct{}, 1)}
	big := strings.Repeat("x", 64<<10)
	var asgs []*longfairv1.Assignment
	for i := range 200 {
		asgs = append(asgs, &longfairv1.Assignment{Attempt: attemptKey{1, int64(i), 1}.ref(), Command: []string{big}})
	}
	c.deliver(asgs)
	c.deliver(asgs[:10]) // already sent
	seen := map[attemptKey]bool{}
	for _, m := range c.out {
		if size := proto.Size(m); size > 2<<20 {
			t.Fatalf("a message of %d bytes", size)
		}
		for _, a := range m.GetAssignments().GetAssignments() {
			k := keyOfRef(a.GetAttempt())
			if seen[k] {
				t.Fatalf("attempt %+v sent twice", k)
			}
			seen[k] = true
		}
	}
	if len(seen) != 200 {
		t.Fatalf("%d attempts sent, want 200", len(seen))
	}
	// Before its stream is reconciled, a worker is sent nothing.
	idle := &workerConn{delivered: map[attemptKey]time.Time{}, outSig: make(chan struct{}, 1)}
	idle.deliver(asgs)
	if len(idle.out) != 0 || len(idle.delivered) != 0 {
		t.Fatal("a stream that is not ready was sent assignments")
	}
}
