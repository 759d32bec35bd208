package server_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

// The worker stream fuzzer reads its input as a script of steps, each a
// kind byte, a length byte and that many bytes:
//
//	0 hello      the bytes are a WorkerHello
//	1 events     the bytes are a WorkerEvents
//	2 heartbeat  (no bytes needed)
//	3 goodbye    the bytes are a WorkerGoodbye
//	4 report     an event about an attempt the leader assigned on this
//	             stream: bytes[0] picks the assignment, bytes[1] the event
//	             kind, bytes[2] the exit code, bytes[3:11] the runtime in
//	             nanoseconds, bytes[11:19] the sequence number
//
// Raw bytes rarely name an attempt that exists; step 4 lets the fuzzer
// report on real ones (start, exit, lose them, out of order, twice, with
// any runtime), which is where the ledger is charged.
const (
	stepHello = iota
	stepEvents
	stepHeartbeat
	stepGoodbye
	stepReport
	stepKinds
)

type streamStep struct {
	kind byte
	data []byte
}

func parseScript(b []byte) []streamStep {
	var out []streamStep
	for len(b) >= 2 && len(out) < 32 {
		k, n := b[0]%stepKinds, int(b[1])
		b = b[2:]
		n = min(n, len(b))
		out = append(out, streamStep{kind: k, data: b[:n]})
		b = b[n:]
	}
	return out
}

func (s streamStep) encode() []byte { return append([]byte{s.kind, byte(len(s.data))}, s.data...) }

func script(steps ...streamStep) []byte {
	var b []byte
	for _, s := range steps {
		b = append(b, s.encode()...)
	}
	return b
}

func protoStep(kind byte, m proto.Message) streamStep {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return streamStep{kind: kind, data: b}
}

func reportStep(assignment byte, kind longfairv1.TaskEventKind, code byte, runtime time.Duration, seq uint64) streamStep {
	b := []byte{assignment, byte(kind), code}
	b = binary.BigEndian.AppendUint64(b, uint64(runtime))
	b = binary.BigEndian.AppendUint64(b, seq)
	return streamStep{kind: stepReport, data: b}
}

// streamAnswerOK reports whether a worker stream may end with code: a
// refusal saying what was wrong, or the test's own cancellation.
func streamAnswerOK(code codes.Code) bool {
	switch code {
	case codes.OK, codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied,
		codes.Unauthenticated, codes.FailedPrecondition, codes.ResourceExhausted, codes.OutOfRange, codes.Aborted:
		return true
	}
	return false
}

// FuzzWorkerStream plays scripts of worker messages (hellos, task events,
// heartbeats, goodbyes, and reports about the attempts the leader
// assigned) over a real Workers.Connect stream with a worker token, to a
// real one-server group whose gossip pool holds the worker's node and
// whose queue holds a job of many tasks. The leader must end a stream it
// refuses with a status that says why (never Internal or Unknown), keep
// serving, and keep a ledger that verifies.
func FuzzWorkerStream(f *testing.F) {
	fs := newFuzzServer(f)
	const node = "fzw"
	newProtoWorker(f, fs.c.Cluster, node, map[string]float64{"cpu": 4, "mem": 1 << 33})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	worker, _ := fs.c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_WORKER, "", 0)

	ad := &longfairv1.WorkerAdvert{Version: 1, Role: server.RoleWorker, NodeId: node, Resources: map[string]float64{"cpu": 4, "mem": 1 << 33}, Address: "127.0.0.1:1"}
	hello := func(fresh bool, session string) streamStep {
		return protoStep(stepHello, &longfairv1.WorkerHello{Advert: ad, Session: session, Fresh: fresh})
	}
	started, exited, lost := longfairv1.TaskEventKind_TASK_EVENT_KIND_STARTED, longfairv1.TaskEventKind_TASK_EVENT_KIND_EXITED, longfairv1.TaskEventKind_TASK_EVENT_KIND_LOST
	for _, s := range [][]streamStep{
		{hello(true, "a")},
		{hello(true, "a"), reportStep(0, started, 0, 0, 1), reportStep(0, exited, 0, 2*time.Second, 2)},
		{hello(true, "b"), reportStep(0, started, 0, 0, 1), reportStep(1, started, 0, 0, 2), reportStep(1, exited, 3, time.Second, 3), reportStep(0, lost, 0, time.Second, 4)},
		{hello(false, "c"), reportStep(0, exited, 0, 365*24*time.Hour, 1), reportStep(0, exited, 0, time.Second, 1)},
		{hello(true, "d"), {kind: stepHeartbeat}, protoStep(stepEvents, &longfairv1.WorkerEvents{Events: []*longfairv1.TaskEvent{
			{Seq: 1, Attempt: &longfairv1.AttemptRef{JobId: 1, Task: 0, Attempt: 1}, Kind: exited, Runtime: durationpb.New(time.Second)}}}),
			protoStep(stepGoodbye, &longfairv1.WorkerGoodbye{Reason: "fuzz"})},
		{protoStep(stepHello, &longfairv1.WorkerHello{Advert: ad, Session: "e", Held: []*longfairv1.HeldAttempt{
			{Attempt: &longfairv1.AttemptRef{JobId: 1, Task: 5, Attempt: 1}, Running: true}},
			Pending: []*longfairv1.TaskEvent{{Seq: 9, Attempt: &longfairv1.AttemptRef{JobId: 1, Task: 5, Attempt: 1}, Kind: exited}}})},
		{protoStep(stepEvents, &longfairv1.WorkerEvents{})},
	} {
		f.Add(script(s...))
	}
	f.Cleanup(func() { fs.verify(f) })
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := parseScript(data)
		if len(steps) == 0 {
			return
		}
		code, msg := fs.play(worker, steps)
		if !streamAnswerOK(code) {
			t.Errorf("the worker stream ended with %v: %s (script %x)", code, msg, data)
		}
		fs.healthy(t)
	})
}

// play runs the steps over one stream and returns how the stream ended
// (Canceled when the script ran out first and the test hung up).
func (fs *fuzzServer) play(secret string, steps []streamStep) (codes.Code, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := longfairv1.NewWorkersClient(fs.conn).Connect(testcluster.As(ctx, secret))
	if err != nil {
		st := status.Convert(err)
		return st.Code(), st.Message()
	}
	type ended struct {
		code codes.Code
		msg  string
	}
	done := make(chan ended, 1)
	assigned := make(chan *longfairv1.AttemptRef, 4096)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				st := status.Convert(err)
				done <- ended{st.Code(), st.Message()}
				close(assigned)
				return
			}
			for _, a := range m.GetAssignments().GetAssignments() {
				select {
				case assigned <- a.GetAttempt():
				default:
				}
			}
		}
	}()
	var refs []*longfairv1.AttemptRef
	// The leader assigns after a hello, within a scheduling pass; a script
	// waits for that at most once, and only after it said hello.
	hello, waited := false, false
	for _, s := range steps {
		var m *longfairv1.WorkerMessage
		switch s.kind {
		case stepHello:
			h := &longfairv1.WorkerHello{}
			if proto.Unmarshal(s.data, h) != nil {
				continue
			}
			hello = true
			m = &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Hello{Hello: h}}
		case stepEvents:
			e := &longfairv1.WorkerEvents{}
			if proto.Unmarshal(s.data, e) != nil {
				continue
			}
			m = &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Events{Events: e}}
		case stepHeartbeat:
			m = &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Heartbeat{Heartbeat: &longfairv1.Heartbeat{}}}
		case stepGoodbye:
			g := &longfairv1.WorkerGoodbye{}
			if proto.Unmarshal(s.data, g) != nil {
				continue
			}
			m = &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Goodbye{Goodbye: g}}
		case stepReport:
			d := append(s.data, make([]byte, 19)...)
			i := int(d[0])
			if len(refs) == 0 && hello && !waited {
				waited = true
				select {
				case a, ok := <-assigned:
					if ok {
						refs = append(refs, a)
					}
				case <-time.After(1500 * time.Millisecond):
				}
			}
		drain:
			for {
				select {
				case a, ok := <-assigned:
					if !ok {
						break drain
					}
					refs = append(refs, a)
				default:
					break drain
				}
			}
			if len(refs) == 0 {
				continue
			}
			ev := &longfairv1.TaskEvent{
				Seq: binary.BigEndian.Uint64(d[11:19]), Attempt: refs[i%len(refs)],
				Kind: longfairv1.TaskEventKind(d[1] % 4), ExitCode: int32(int8(d[2])),
				Runtime: durationpb.New(time.Duration(binary.BigEndian.Uint64(d[3:11]))),
			}
			m = &longfairv1.WorkerMessage{Msg: &longfairv1.WorkerMessage_Events{Events: &longfairv1.WorkerEvents{Events: []*longfairv1.TaskEvent{ev}}}}
		}
		if err := stream.Send(m); err != nil {
			break
		}
	}
	// Give the leader a moment to act on the last message and to end the
	// stream if it refuses it; then hang up, as a worker that exits does.
	select {
	case e := <-done:
		return e.code, e.msg
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	e := <-done
	return e.code, e.msg
}
