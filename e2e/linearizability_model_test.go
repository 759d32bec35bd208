package e2e

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc/codes"
)

// The sequential specification the linearizability check holds the
// public API to, one account at a time (accounts share nothing, so
// porcupine checks each alone): an account has granted SUs, held SUs, the
// grants applied (by id) and the jobs submitted (by request id) and
// cancelled. Every job the history submits has the same shape, so each
// holds the same amount, which the test measures once before the history.

type linKind int

const (
	opGrant linKind = iota
	opSubmit
	opCancel
	opRead
)

func (k linKind) String() string {
	return [...]string{"grant", "submit", "cancel", "read"}[k]
}

// linInput is an operation as called. idx numbers the account's grant ids
// (opGrant) or request ids (opSubmit, opCancel) densely from 0, so a state
// is a few bit sets.
type linInput struct {
	account string
	kind    linKind
	idx     int
	id      string // the grant id or request id
	amount  int64  // opGrant
	job     uint64 // opCancel
}

type linResult int

const (
	resOK        linResult = iota
	resExhausted           // SubmitJob: ResourceExhausted
	resUnknown             // timed out or Unavailable: it may or may not have happened
	resError               // any other error: no sequential history gives one
)

// linOutput is what the call answered.
type linOutput struct {
	result         linResult
	code           codes.Code
	msg            string
	granted, held  int64 // opRead
	available      int64 // opRead
	job            uint64
	returnedHoldSU int64 // opSubmit: the job's hold
}

type bits []uint64

func (b bits) has(i int) bool { return i/64 < len(b) && b[i/64]&(1<<(i%64)) != 0 }

// with returns a copy of b with bit i set; b is not changed. Equal sets
// have equal lengths, because the length is set by the highest bit.
func (b bits) with(i int) bits {
	out := make(bits, max(len(b), i/64+1))
	copy(out, b)
	out[i/64] |= 1 << (i % 64)
	return out
}

type linState struct {
	granted, held           int64
	grants, jobs, cancelled bits
}

func (s *linState) equal(o *linState) bool {
	return s.granted == o.granted && s.held == o.held &&
		slices.Equal(s.grants, o.grants) && slices.Equal(s.jobs, o.jobs) && slices.Equal(s.cancelled, o.cancelled)
}

// accountModel is the specification, given the hold of one job.
func accountModel(hold int64) porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			by := map[string][]porcupine.Operation{}
			var order []string
			for _, op := range history {
				a := op.Input.(linInput).account
				if _, ok := by[a]; !ok {
					order = append(order, a)
				}
				by[a] = append(by[a], op)
			}
			var out [][]porcupine.Operation
			for _, a := range order {
				out = append(out, by[a])
			}
			return out
		},
		Init: func() any { return &linState{} },
		Step: func(state, input, output any) (bool, any) {
			return linStep(hold, state.(*linState), input.(linInput), output.(linOutput))
		},
		Equal: func(a, b any) bool { return a.(*linState).equal(b.(*linState)) },
		Hash: func(s any) uint64 {
			st := s.(*linState)
			return uint64(st.granted)*1000003 ^ uint64(st.held)
		},
		DescribeOperation: func(input, output any) string { return describeOp(input.(linInput), output.(linOutput)) },
		DescribeState: func(s any) string {
			st := s.(*linState)
			return fmt.Sprintf("granted %d held %d available %d", st.granted, st.held, st.granted-st.held)
		},
	}
}

// linStep is one operation of the specification. An unknown outcome is
// the operation having happened: porcupine may place it after every
// other operation, which is the same as never.
func linStep(hold int64, s *linState, in linInput, out linOutput) (bool, any) {
	if out.result == resError {
		return false, s
	}
	ok := out.result == resOK || out.result == resUnknown
	switch in.kind {
	case opGrant:
		// A grant id adds its amount once, however often it is sent.
		if !ok {
			return false, s
		}
		if s.grants.has(in.idx) {
			return true, s
		}
		n := *s
		n.granted += in.amount
		n.grants = s.grants.with(in.idx)
		return true, &n
	case opSubmit:
		// A request id submits once; its retries return that job. A new
		// job is accepted, and holds, exactly when the available SUs
		// cover its hold; otherwise ResourceExhausted changes nothing.
		if s.jobs.has(in.idx) {
			return ok, s
		}
		if s.granted-s.held < hold {
			return out.result == resExhausted || out.result == resUnknown, s
		}
		if !ok {
			return false, s
		}
		n := *s
		n.held += hold
		n.jobs = s.jobs.with(in.idx)
		return true, &n
	case opCancel:
		// Only acknowledged jobs are cancelled; cancelling releases the
		// whole hold (no task of these jobs can start), once.
		if !ok || !s.jobs.has(in.idx) {
			return false, s
		}
		if s.cancelled.has(in.idx) {
			return true, s
		}
		n := *s
		n.held -= hold
		n.cancelled = s.cancelled.with(in.idx)
		return true, &n
	case opRead:
		if out.result != resOK {
			return true, s
		}
		return out.granted == s.granted && out.held == s.held && out.available == s.granted-s.held, s
	}
	return false, s
}

func describeOp(in linInput, out linOutput) string {
	var b strings.Builder
	switch in.kind {
	case opGrant:
		fmt.Fprintf(&b, "grant(%s, %d)", in.id, in.amount)
	case opSubmit:
		fmt.Fprintf(&b, "submit(%s)", in.id)
	case opCancel:
		fmt.Fprintf(&b, "cancel(%s = job %d)", in.id, in.job)
	case opRead:
		b.WriteString("read()")
	}
	switch out.result {
	case resOK:
		switch in.kind {
		case opRead:
			fmt.Fprintf(&b, " -> granted %d held %d available %d", out.granted, out.held, out.available)
		case opSubmit:
			fmt.Fprintf(&b, " -> job %d", out.job)
		default:
			b.WriteString(" -> ok")
		}
	case resExhausted:
		b.WriteString(" -> ResourceExhausted")
	case resUnknown:
		fmt.Fprintf(&b, " -> unknown (%v: %s)", out.code, out.msg)
	case resError:
		fmt.Fprintf(&b, " -> %v: %s", out.code, out.msg)
	}
	return b.String()
}

// unknownReturn is the return time of an operation whose outcome is
// unknown: it may take effect at any time after its call.
const unknownReturn = math.MaxInt64

// The specification rejects what the fault test looks for, so a passing
// check means something: a read that misses an acknowledged grant, a
// grant applied twice, a submission accepted beyond the funds or refused
// within them, and a write lost after it was acknowledged.
func TestAccountModelRejectsAnomalies(t *testing.T) {
	const hold = 100
	op := func(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		in.account = "a"
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	grant := func(idx int, amount int64) linInput {
		return linInput{kind: opGrant, idx: idx, id: fmt.Sprint("g", idx), amount: amount}
	}
	submit := func(idx int) linInput { return linInput{kind: opSubmit, idx: idx, id: fmt.Sprint("s", idx)} }
	read := linInput{kind: opRead}
	ok := linOutput{result: resOK}
	unknown := linOutput{result: resUnknown}
	exhausted := linOutput{result: resExhausted}
	balance := func(granted, held int64) linOutput {
		return linOutput{result: resOK, granted: granted, held: held, available: granted - held}
	}
	for _, tc := range []struct {
		name    string
		history []porcupine.Operation
		want    bool
	}{
		{"acknowledged grant then read", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(1, 20, 30, read, balance(150, 0))}, true},
		{"stale read after an acknowledged grant", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(1, 20, 30, read, balance(0, 0))}, false},
		{"read concurrent with a grant may miss it", []porcupine.Operation{
			op(0, 0, 30, grant(0, 150), ok), op(1, 10, 20, read, balance(0, 0))}, true},
		{"a retried grant id applies once", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, grant(0, 150), ok), op(1, 40, 50, read, balance(150, 0))}, true},
		{"a retried grant id applied twice", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, grant(0, 150), ok), op(1, 40, 50, read, balance(300, 0))}, false},
		{"submission within the funds holds", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, submit(0), ok), op(1, 40, 50, read, balance(150, hold))}, true},
		{"submission beyond the funds accepted", []porcupine.Operation{
			op(0, 0, 10, grant(0, 50), ok), op(0, 20, 30, submit(0), ok)}, false},
		{"submission within the funds refused", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, submit(0), exhausted)}, false},
		{"an unknown grant may have happened", []porcupine.Operation{
			op(0, 0, unknownReturn, grant(0, 150), unknown), op(1, 20, 30, read, balance(150, 0))}, true},
		{"an unknown grant may not have happened", []porcupine.Operation{
			op(0, 0, unknownReturn, grant(0, 150), unknown), op(1, 20, 30, read, balance(0, 0))}, true},
		{"an acknowledged cancel releases the hold", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, submit(0), ok),
			op(0, 40, 50, linInput{kind: opCancel, idx: 0, id: "s0"}, ok), op(1, 60, 70, read, balance(150, 0))}, true},
		{"an acknowledged cancel lost", []porcupine.Operation{
			op(0, 0, 10, grant(0, 150), ok), op(0, 20, 30, submit(0), ok),
			op(0, 40, 50, linInput{kind: opCancel, idx: 0, id: "s0"}, ok), op(1, 60, 70, read, balance(150, hold))}, false},
	} {
		if got := porcupine.CheckOperations(accountModel(hold), tc.history); got != tc.want {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
