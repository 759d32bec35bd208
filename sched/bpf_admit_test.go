package sched

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

var (
	testbedResources = []string{"cpu", "mem"}
	// The BPF paper's testbed: 40 nodes of 32 cores and 64 GB.
	testbedCapacity = ledger.Vector{40 * 32, 40 * 64}
)

func lqRequest(name string, start, period, deadline time.Duration, burst ledger.Vector) QueueRequest {
	return QueueRequest{Name: name, Weight: 1, Latency: &LatencySpec{
		Start: ledger.Time(start), Period: period, Deadline: deadline, Burst: burst,
	}}
}

func TestAdmissionOfThreeLatencyQueuesAsInSection525(t *testing.T) {
	// §5.2.5: one throughput queue queued from the start; latency queues
	// arriving at 50, 100 and 150 s with periods 150, 110 and 60 s and
	// identical bursts. The paper gives no burst size or deadline; bursts
	// of 80% of the cluster for 25 s reproduce its outcome.
	burst := testbedCapacity.Clone()
	burst.Scale(0.8)
	queues := []QueueRequest{
		{Name: "TQ-0", Weight: 1},
		lqRequest("LQ-0", 50*time.Second, 150*time.Second, 25*time.Second, burst),
		lqRequest("LQ-1", 100*time.Second, 110*time.Second, 25*time.Second, burst),
		lqRequest("LQ-2", 150*time.Second, 60*time.Second, 25*time.Second, burst),
	}
	got, err := AdmitAll(testbedResources, testbedCapacity, queues)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		class  QueueClass
		reason string
	}{
		{Elastic, "throughput queue"},
		{Hard, "hard"},
		{Soft, "resource condition fails"},
		{Elastic, "fairness condition fails"},
	}
	for i, w := range want {
		if got[i].Class != w.class || !strings.Contains(got[i].Reason, w.reason) {
			t.Errorf("%s: %v (%s), the paper admits it as %v (%q)", queues[i].Name, got[i].Class, got[i].Reason, w.class, w.reason)
		}
	}
	if !strings.Contains(got[2].Reason, `"LQ-0"`) {
		t.Errorf("LQ-1's reason does not name the hard queue in its way: %s", got[2].Reason)
	}
}

func TestAdmissionRejectsWhatWouldBreakAGuarantee(t *testing.T) {
	// A hard queue asking 40% of the cluster's time: within its half with
	// two queues, beyond its third with three.
	lq := lqRequest("lq", 0, 100*time.Second, 40*time.Second, testbedCapacity.Clone())
	admitted := []AdmittedQueue{{QueueRequest: lq, Class: Hard}, {QueueRequest: QueueRequest{Name: "tq0", Weight: 1}}}
	for _, q := range []QueueRequest{
		{Name: "tq1", Weight: 1},
		lqRequest("small", 0, 100*time.Second, time.Second, ledger.Vector{1, 1}),
	} {
		d, err := AdmitQueue(testbedResources, testbedCapacity, admitted, q)
		if err != nil {
			t.Fatal(err)
		}
		if d.Class != Rejected || !strings.Contains(d.Reason, "safety") || !strings.Contains(d.Reason, `"lq"`) {
			t.Errorf("%s: %v (%s), want rejected by the safety condition naming lq", q.Name, d.Class, d.Reason)
		}
	}
	// Without the hard queue's guarantee at stake the same queues get in.
	admitted[0].Class = Elastic
	d, err := AdmitQueue(testbedResources, testbedCapacity, admitted, QueueRequest{Name: "tq1", Weight: 1})
	if err != nil || d.Class != Elastic {
		t.Errorf("with lq elastic a throughput queue is %v (%v), want elastic", d.Class, err)
	}
}

func TestAdmissionWeighsQueues(t *testing.T) {
	// A burst of the whole cluster for 30% of the period fits in an equal
	// half beside one throughput queue, not in the quarter left beside a
	// throughput queue of weight 3.
	lq := lqRequest("lq", 0, 100*time.Second, 30*time.Second, testbedCapacity.Clone())
	for weight, want := range map[float64]QueueClass{1: Hard, 3: Elastic} {
		admitted := []AdmittedQueue{{QueueRequest: QueueRequest{Name: "tq", Weight: weight}}}
		d, err := AdmitQueue(testbedResources, testbedCapacity, admitted, lq)
		if err != nil || d.Class != want {
			t.Errorf("beside a throughput queue of weight %v: %v (%v), want %v: %s", weight, d.Class, err, want, d.Reason)
		}
	}
}

func TestHardQueuesThatNeverBurstTogetherAreBothHard(t *testing.T) {
	big := testbedCapacity.Clone()
	big.Scale(0.8)
	queues := []QueueRequest{
		lqRequest("even", 0, 100*time.Second, 20*time.Second, big),
		lqRequest("odd", 50*time.Second, 100*time.Second, 20*time.Second, big),
		lqRequest("clash", 10*time.Second, 100*time.Second, 5*time.Second, big),
	}
	got, err := AdmitAll(testbedResources, testbedCapacity, queues)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Class != Hard || got[1].Class != Hard || got[2].Class != Soft {
		t.Errorf("classes %v %v %v, want hard, hard, soft (clash bursts during even's bursts)", got[0].Class, got[1].Class, got[2].Class)
	}
}

func TestOverlapMatchesEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(72, 2))
	for range 2000 {
		a := &LatencySpec{Start: ledger.Time(r.IntN(50)), Period: time.Duration(1 + r.IntN(30))}
		a.Deadline = time.Duration(1 + r.Int64N(int64(a.Period)))
		b := &LatencySpec{Start: ledger.Time(r.IntN(50)), Period: time.Duration(1 + r.IntN(30))}
		b.Deadline = time.Duration(1 + r.Int64N(int64(b.Period)))
		// Enumerate windows over more than a full hyperperiod past both
		// starts and look for a shared instant.
		horizon := int64(50 + 2*30*30 + 60)
		busy := make([]bool, horizon)
		for s := int64(a.Start); s < horizon; s += int64(a.Period) {
			for x := s; x < s+int64(a.Deadline) && x < horizon; x++ {
				busy[x] = true
			}
		}
		want := false
		for s := int64(b.Start); s < horizon-30 && !want; s += int64(b.Period) {
			for x := s; x < s+int64(b.Deadline); x++ {
				if busy[x] {
					want = true
					break
				}
			}
		}
		if got := overlap(a, b); got != want {
			t.Fatalf("a %+v b %+v: overlap %v, enumeration says %v", *a, *b, got, want)
		}
		if overlap(b, a) != want {
			t.Fatalf("overlap is not symmetric for %+v and %+v", *a, *b)
		}
	}
}

func TestBadQueueRequestIsAnError(t *testing.T) {
	ok := lqRequest("lq", 0, time.Minute, 10*time.Second, ledger.Vector{1, 1})
	cases := map[string]func() (Admission, error){
		"no name": func() (Admission, error) {
			return AdmitQueue(testbedResources, testbedCapacity, nil, QueueRequest{Weight: 1})
		},
		"negative weight": func() (Admission, error) {
			return AdmitQueue(testbedResources, testbedCapacity, nil, QueueRequest{Name: "x", Weight: -1})
		},
		"deadline past period": func() (Admission, error) {
			q := ok
			spec := *q.Latency
			spec.Deadline = 2 * time.Minute
			q.Latency = &spec
			return AdmitQueue(testbedResources, testbedCapacity, nil, q)
		},
		"burst of the wrong length": func() (Admission, error) {
			q := ok
			spec := *q.Latency
			spec.Burst = ledger.Vector{1}
			q.Latency = &spec
			return AdmitQueue(testbedResources, testbedCapacity, nil, q)
		},
		"capacity of the wrong length": func() (Admission, error) {
			return AdmitQueue(testbedResources, ledger.Vector{1}, nil, ok)
		},
		"already admitted": func() (Admission, error) {
			return AdmitQueue(testbedResources, testbedCapacity, []AdmittedQueue{{QueueRequest: ok, Class: Hard}}, ok)
		},
	}
	for name, admit := range cases {
		if d, err := admit(); err == nil {
			t.Errorf("%s: decided %v (%s) instead of refusing the request", name, d.Class, d.Reason)
		}
	}
	if _, err := AdmitQueue(testbedResources, testbedCapacity, nil, ok); err != nil {
		t.Fatalf("the unspoiled request is refused: %v", err)
	}
}
