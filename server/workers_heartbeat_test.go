package server_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// TestLeaderBeatsOnlyWhenItHasSentNothing: a worker that beats at the
// interval the welcome set hears from the leader through the echoes of its
// beats, and gets no beats of the leader's own on top (at 1,000 workers
// they were a third of the leader's messages); a worker whose beats stop
// still hears the leader at least once per interval, so that its watchdog
// does not take a live leader for gone.
func TestLeaderBeatsOnlyWhenItHasSentNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	w := newProtoWorker(t, c, "hb1", map[string]float64{"cpu": 1, "mem": 1 << 30})

	sctx, stop := context.WithCancel(ctx)
	defer stop()
	stream, err := longfairv1.NewWorkersClient(c.Conn(leader)).Connect(sctx)
	if err != nil {
		t.Fatal(err)
	}
	hello := &longfairv1.WorkerHello{Advert: w.advert, Session: "hb", Fresh: true, FencedWithin: durationpb.New(time.Second)}
	if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: hello}}); err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil || first.GetWelcome() == nil {
		t.Fatalf("first message %v (%v), want a welcome", first, err)
	}
	every := first.GetWelcome().GetHeartbeatInterval().AsDuration()
	if every <= 0 {
		t.Fatalf("the welcome sets no heartbeat interval: %v", first)
	}

	beats := make(chan uint64, 1024) // the seq of each beat the leader sends
	go func() {
		defer close(beats)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			if hb := m.GetHeartbeat(); hb != nil {
				beats <- hb.GetSeq()
			}
		}
	}()

	// Phase 1: beat at the interval, numbered, as a worker does.
	const rounds = 10
	echoed := map[uint64]bool{}
	own := 0
	drain := func(until time.Time) {
		for {
			select {
			case seq, ok := <-beats:
				if !ok {
					t.Fatal("the leader closed the stream")
				}
				if seq > 0 {
					echoed[seq] = true
				} else {
					own++
				}
			case <-time.After(time.Until(until)):
				return
			}
		}
	}
	t0 := time.Now()
	for seq := uint64(1); seq <= rounds; seq++ {
		if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{Seq: seq}}}); err != nil {
			t.Fatal(err)
		}
		drain(t0.Add(time.Duration(seq) * every))
	}
	drain(time.Now().Add(every / 2))
	if len(echoed) != rounds {
		t.Fatalf("%d of %d numbered beats were echoed; every one must be (it renews the worker's lease)", len(echoed), rounds)
	}
	// A tick may fall between two echoes when the beats drift against the
	// leader's ticker; a beat of its own every interval is what it must not send.
	if own > rounds/3 {
		t.Fatalf("over %d intervals in which every beat of the worker's was echoed, the leader also sent %d beats of its own; want at most %d", rounds, own, rounds/3)
	}

	// Phase 2: the worker goes quiet (for less than the leader's silence
	// limit): the leader's own beats keep the stream alive.
	own = 0
	quiet := time.Now()
	for time.Since(quiet) < 3*every {
		select {
		case seq, ok := <-beats:
			if !ok {
				t.Fatal("the leader closed the stream while the worker was quiet for less than its silence limit")
			}
			if seq == 0 {
				own++
			}
		case <-time.After(time.Until(quiet.Add(3 * every))):
		}
	}
	if own < 1 {
		t.Fatalf("the worker heard nothing from the leader for %v: a quiet worker must get the leader's own beats", 3*every)
	}
}
