package sched

import (
	"fmt"
	"strings"
	"time"

	"github.com/longfair/longfair/ledger"
)

// QueueRequest is a queue asking to be admitted under bpf: an account, as a
// throughput queue (Latency nil) or a latency queue.
type QueueRequest struct {
	Name string `json:"name"`
	// Weight is the queue's share of the cluster relative to the others
	// (the account's weight). The paper has equal weights; when every
	// queue's weight is zero all count as equal.
	Weight  float64      `json:"weight"`
	Latency *LatencySpec `json:"latency,omitempty"`
}

// AdmittedQueue is a queue admission control has let in, with its class.
type AdmittedQueue struct {
	QueueRequest
	Class QueueClass `json:"class"`
}

// Admission is admission control's decision on one queue.
type Admission struct {
	Class QueueClass `json:"class"`
	// Reason says which conditions held or failed, with the numbers, and
	// for a rejection or a lesser class what would change the outcome.
	Reason string `json:"reason"`
}

// AdmitQueue is BPF's admission control (§3.3, Algorithm 1 LQADMIT and
// TQADMIT) for one new queue on a cluster of the given capacity that has
// already admitted the queues in admitted:
//
//   - safety (2): with one more queue, every admitted hard or soft latency
//     queue must still get its burst d_j·t_j within its fair share of a
//     period, C·P_j·w_j/Σw; otherwise the new queue is rejected;
//   - a throughput queue that passes safety is elastic;
//   - fairness (3): a latency queue whose own burst d_i·t_i exceeds its fair
//     share C·P_i·w_i/Σw is elastic (fair share only, no guarantee);
//   - resource (4): if d_i fits in what the hard queues whose bursts can
//     overlap its own leave of C, it is hard, else soft.
//
// Two periodic bursts overlap when some burst of one starts less than its
// own length after a burst of the other starts. The resource condition adds
// up every hard queue that overlaps the new one, which is exact for one such
// queue and errs on the safe side (soft rather than hard) for several that
// never burst all at once.
//
// AdmitQueue is pure: the live system calls it when an admin creates a
// queue, the simulator for every queue at the start. An error means the
// request itself is malformed (nothing is admitted or rejected).
func AdmitQueue(resources []string, capacity ledger.Vector, admitted []AdmittedQueue, q QueueRequest) (Admission, error) {
	n := len(resources)
	if err := capacity.Validate(n); err != nil {
		return Admission{}, fmt.Errorf("cluster capacity: %w", err)
	}
	if err := q.validate(n); err != nil {
		return Admission{}, fmt.Errorf("queue %q: %w", q.Name, err)
	}
	for i := range admitted {
		if err := admitted[i].validate(n); err != nil {
			return Admission{}, fmt.Errorf("admitted queue %q: %w", admitted[i].Name, err)
		}
		if admitted[i].Class == Rejected {
			return Admission{}, fmt.Errorf("admitted queue %q is marked rejected: pass only queues that were admitted", admitted[i].Name)
		}
		if admitted[i].Name == q.Name {
			return Admission{}, fmt.Errorf("queue %q is already admitted (as %v)", q.Name, admitted[i].Class)
		}
	}
	ac := admission{resources: resources, capacity: capacity, admitted: admitted, q: q}
	ac.weighQueues()
	for i := range admitted {
		j := &admitted[i]
		if j.Latency == nil || (j.Class != Hard && j.Class != Soft) {
			continue
		}
		if k, ok := ac.overShare(j.Latency, j.Weight); ok {
			share := ac.fairShare(j.Latency.Period, j.Weight)
			return Admission{Class: Rejected, Reason: fmt.Sprintf(
				"rejected: the safety condition fails: with %s the fair share of %v queue %q over its %v period would be %s, less than its guaranteed burst %s (burst × deadline) in %s; the cluster cannot take another queue without breaking that guarantee",
				queues(len(admitted)+1), j.Class, j.Name, j.Latency.Period, ac.format(share), ac.format(j.Latency.Budget()), resources[k])}, nil
		}
	}
	if q.Latency == nil {
		return Admission{Class: Elastic, Reason: fmt.Sprintf(
			"elastic: a throughput queue; the safety condition holds (every guaranteed queue keeps its burst within its fair share with %s)", queues(len(admitted)+1))}, nil
	}
	lq := q.Latency
	share := ac.fairShare(lq.Period, q.Weight)
	if k, ok := exceeds(lq.Budget(), share); ok {
		return Admission{Class: Elastic, Reason: fmt.Sprintf(
			"elastic: the fairness condition fails: the burst %s (burst × deadline) exceeds the queue's fair share %s over its %v period in %s, so it gets its long-term fair share only; a smaller burst, a shorter deadline or a longer period would get it a guarantee",
			ac.format(lq.Budget()), ac.format(share), lq.Period, resources[k])}, nil
	}
	left, hard := ac.leftByHard()
	if k, ok := exceeds(lq.Burst, left); ok {
		return Admission{Class: Soft, Reason: fmt.Sprintf(
			"soft: safety and fairness hold, but the resource condition fails: during its bursts the hard queues %s may hold all but %s, less than its burst %s in %s; its bursts wait for those queues and share the rest shortest-remaining-first",
			ac.names(hard), ac.format(left), ac.format(lq.Burst), resources[k])}, nil
	}
	return Admission{Class: Hard, Reason: fmt.Sprintf(
		"hard: safety, fairness (burst × deadline %s within the fair share %s per period) and resource conditions hold (the burst %s fits in the %s hard queues leave)",
		ac.format(lq.Budget()), ac.format(share), ac.format(lq.Burst), ac.format(left))}, nil
}

// AdmitAll admits queues one after another, as they would be created, and
// returns each one's decision.
func AdmitAll(resources []string, capacity ledger.Vector, queues []QueueRequest) ([]Admission, error) {
	var admitted []AdmittedQueue
	out := make([]Admission, len(queues))
	for i, q := range queues {
		d, err := AdmitQueue(resources, capacity, admitted, q)
		if err != nil {
			return nil, err
		}
		out[i] = d
		if d.Class != Rejected {
			admitted = append(admitted, AdmittedQueue{QueueRequest: q, Class: d.Class})
		}
	}
	return out, nil
}

func (q *QueueRequest) validate(resources int) error {
	if q.Name == "" {
		return fmt.Errorf("a queue needs a name")
	}
	if !(q.Weight >= 0) || q.Weight > 1e300 {
		return fmt.Errorf("weight %v must be finite and non-negative", q.Weight)
	}
	if q.Latency != nil {
		return q.Latency.Validate(resources)
	}
	return nil
}

// admission is one AdmitQueue decision in progress.
type admission struct {
	resources []string
	capacity  ledger.Vector
	admitted  []AdmittedQueue
	q         QueueRequest
	// equal is set when no queue has a weight: all count as 1.
	equal bool
	total float64 // Σw over the admitted queues and the new one
}

func (ac *admission) weighQueues() {
	ac.total = ac.q.Weight
	for i := range ac.admitted {
		ac.total += ac.admitted[i].Weight
	}
	if ac.total == 0 {
		ac.equal, ac.total = true, float64(len(ac.admitted)+1)
	}
}

// fairShare is C·P·w/Σw: what a queue of weight w is entitled to over a
// period P once the new queue is in.
func (ac *admission) fairShare(period time.Duration, w float64) ledger.Vector {
	if ac.equal {
		w = 1
	}
	s := ac.capacity.Clone()
	s.Scale(period.Seconds() * w / ac.total)
	return s
}

// overShare reports whether a burst's d·t exceeds the queue's fair share
// C·P·w/Σw in some resource (beyond the vectors' tolerance), and which; it
// is fairShare and exceeds without allocating, for the safety loop.
func (ac *admission) overShare(spec *LatencySpec, w float64) (int, bool) {
	if ac.equal {
		w = 1
	}
	deadline, scale := spec.Deadline.Seconds(), spec.Period.Seconds()*w/ac.total
	for k, d := range spec.Burst {
		need, limit := d*deadline, ac.capacity[k]*scale
		if need > limit+1e-9*max(1, limit) {
			return k, true
		}
	}
	return 0, false
}

// leftByHard is C less the bursts of the hard queues whose bursts can
// overlap the new queue's, and the indices of those queues in admitted.
func (ac *admission) leftByHard() (ledger.Vector, []int) {
	left := ac.capacity.Clone()
	var hard []int
	for i := range ac.admitted {
		j := &ac.admitted[i]
		if j.Class == Hard && j.Latency != nil && overlap(ac.q.Latency, j.Latency) {
			left.Sub(j.Latency.Burst)
			hard = append(hard, i)
		}
	}
	return left, hard
}

// names quotes the names of the admitted queues at the given indices, the
// first few of them when there are many.
func (ac *admission) names(queues []int) string {
	const shown = 5
	var b strings.Builder
	for n, i := range queues {
		if n == shown {
			fmt.Fprintf(&b, " and %d more", len(queues)-shown)
			break
		}
		if n > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", ac.admitted[i].Name)
	}
	return b.String()
}

// overlap reports whether some burst window [T(n), T(n)+deadline) of a meets
// one of b. The offsets between window starts are (b.Start − a.Start) plus
// every multiple of g = gcd(a.Period, b.Period), so they meet exactly when
// the offset r ∈ [0, g) closest above zero is under a's length, or r − g is
// above minus b's length.
func overlap(a, b *LatencySpec) bool {
	g := gcd(int64(a.Period), int64(b.Period))
	r := int64(b.Start-a.Start) % g
	if r < 0 {
		r += g
	}
	return r < int64(a.Deadline) || g-r < int64(b.Deadline)
}

// queues says "1 queue" or "n queues".
func queues(n int) string {
	if n == 1 {
		return "1 queue"
	}
	return fmt.Sprintf("%d queues", n)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// exceeds reports whether need is above limit in some resource (beyond the
// vectors' tolerance), and which.
func exceeds(need, limit ledger.Vector) (int, bool) {
	for k := range need {
		if need[k] > limit[k]+1e-9*max(1, limit[k]) {
			return k, true
		}
	}
	return 0, false
}

// format writes <cpu 4, mem 15> with the cluster's resource names.
func (ac *admission) format(v ledger.Vector) string {
	var b strings.Builder
	b.WriteByte('<')
	for k, x := range v {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.4g", ac.resources[k], x)
	}
	b.WriteByte('>')
	return b.String()
}
