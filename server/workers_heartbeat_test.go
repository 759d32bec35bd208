package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
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
	stream, welcome, _, err := sayHello(ctx, t, c, &longfairv1.WorkerHello{Advert: rawAdvert("hb1"), Session: "hb", Fresh: true, FencedWithin: durationpb.New(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	every := welcome.GetHeartbeatInterval().AsDuration()
	if every <= 0 {
		t.Fatalf("the welcome sets no heartbeat interval: %v", welcome)
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

// TestHeartbeatIntervalFollowsTheFenceTimeout: the leader paces each
// stream by the fence timeout its worker's hello gives (an eighth of it,
// between half a second and two), keeps a slowly paced stream open
// through a silence a fast one is closed for, and refuses a fence timeout
// that the hello's fenced_within does not include.
func TestHeartbeatIntervalFollowsTheFenceTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.NewWith(t, 1, func(cfg *server.Config) { cfg.WorkerLossTimeout = server.Duration(time.Minute) })
	hello := func(id string, fence, within *durationpb.Duration) (longfairv1.Workers_ConnectClient, *longfairv1.Welcome, error) {
		t.Helper()
		stream, welcome, _, err := sayHello(ctx, t, c, &longfairv1.WorkerHello{Advert: rawAdvert(id), Session: id, Fresh: true, FencedWithin: within, FenceTimeout: fence})
		return stream, welcome, err
	}

	streams := map[time.Duration]longfairv1.Workers_ConnectClient{}
	for i, tc := range []struct {
		fence time.Duration // 0: not given
		want  time.Duration
	}{
		{0, 500 * time.Millisecond},
		{2 * time.Second, 500 * time.Millisecond},
		{8 * time.Second, time.Second},
		{30 * time.Second, 2 * time.Second},
		{50 * time.Second, 2 * time.Second},
	} {
		var fence *durationpb.Duration
		if tc.fence > 0 {
			fence = durationpb.New(tc.fence)
		}
		stream, welcome, err := hello(fmt.Sprintf("hbf%d", i), fence, durationpb.New(tc.fence+time.Second))
		if err != nil {
			t.Fatalf("hello with fence timeout %v: %v", tc.fence, err)
		}
		if got := welcome.GetHeartbeatInterval().AsDuration(); got != tc.want {
			t.Errorf("fence timeout %v: heartbeat interval %v, want %v", tc.fence, got, tc.want)
		}
		streams[tc.fence] = stream
	}

	// Both workers stay silent for 3s: over four beats of the older
	// worker's pace, under four of the slow one's.
	time.Sleep(3 * time.Second)
	for fence, open := range map[time.Duration]bool{0: false, 30 * time.Second: true} {
		stream := streams[fence]
		if err := stream.Send(&longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{Seq: 1}}}); err != nil && open {
			t.Fatalf("fence timeout %v: the stream was closed after 3s of silence: %v", fence, err)
		}
		echoed := false
		for !echoed {
			m, err := stream.Recv()
			if err != nil {
				if open {
					t.Fatalf("fence timeout %v: the stream was closed after 3s of silence: %v", fence, err)
				}
				break
			}
			echoed = m.GetHeartbeat().GetSeq() == 1
		}
		if echoed != open {
			t.Errorf("fence timeout %v: after 3s of silence the stream is open: %v, want %v", fence, echoed, open)
		}
	}

	if _, _, err := hello("hbbad", durationpb.New(5*time.Second), durationpb.New(2*time.Second)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a fence timeout of 5s that fenced_within 2s does not include: %v, want InvalidArgument", err)
	}
}
