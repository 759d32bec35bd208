package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/ledger"
)

// rawEntry builds an entry without Encode's shape checks, the way a buggy
// or hostile leader could.
func rawEntry(version uint8, t CommandType, at ledger.Time, body string) []byte {
	buf := make([]byte, envelopeHeader, envelopeHeader+len(body))
	buf[0], buf[1] = version, byte(t)
	binary.BigEndian.PutUint64(buf[2:], uint64(at))
	return append(buf, body...)
}

func rawCommand(t testing.TB, at ledger.Time, cmd Command) []byte {
	body, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return rawEntry(CommandVersion, cmd.Type(), at, string(body))
}

// stateDigest is the digest of everything but the applied index and the
// clock, which every entry advances, refused or not.
func stateDigest(t testing.TB, f *FSM) [32]byte {
	t.Helper()
	d, err := f.digest(func(bucket, key []byte) bool {
		return bytes.Equal(bucket, bucketMeta) && (bytes.Equal(key, keyApplied) || bytes.Equal(key, keyTime))
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// busyHarness has an account with a user, 100 SU, a node, a running job
// (1) with two of four tasks placed, and an ended job (2).
func busyHarness(t testing.TB) *harness {
	h := newHarness(t)
	h.setup(100)
	h.ok(&CreateAccount{Name: "chem"})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 2}, Tasks: 4, Walltime: time.Hour, Command: []string{"a"}, RequestID: "r1"})
	h.ok(&Assign{Placements: []TaskPlacement{{JobID: 1, Task: 0, Node: "n1"}, {JobID: 1, Task: 1, Node: "n1"}}})
	h.ok(&SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"b"}})
	h.ok(&CancelJob{JobID: 2})
	return h
}

// futureVersion is a version no release has written yet.
const futureVersion = max(CommandVersion, MultiVersion) + 1

// Every refusal says what is wrong with the right code, and changes nothing.
func TestRefusalsChangeNothing(t *testing.T) {
	past := t0 - 1
	cases := []struct {
		name  string
		entry func(t testing.TB, at ledger.Time) []byte
		code  Kind
		words []string
	}{
		{"short entry", func(testing.TB, ledger.Time) []byte { return []byte{1, 2, 3} }, KindInvalid, []string{"shorter"}},
		{"future version", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(futureVersion, TypeCreateAccount, at, `{"name":"x"}`)
		}, KindPrecondition, []string{fmt.Sprintf("version %d", futureVersion), "upgrade"}},
		{"unknown type", func(_ testing.TB, at ledger.Time) []byte { return rawEntry(1, 200, at, `{}`) }, KindInvalid, []string{"unknown command type 200"}},
		{"bad json", func(_ testing.TB, at ledger.Time) []byte { return rawEntry(1, TypeSubmitJob, at, `{"account":`) }, KindInvalid, []string{"malformed submit-job"}},
		{"unknown field", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(1, TypeCreateAccount, at, `{"name":"x","colour":"red"}`)
		}, KindInvalid, []string{"colour"}},
		{"trailing data", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(1, TypeCreateAccount, at, `{"name":"x"} {}`)
		}, KindInvalid, []string{"trailing"}},
		{"wrong json type", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(1, TypeSubmitJob, at, `{"tasks":"many"}`)
		}, KindInvalid, []string{"malformed"}},
		{"bad account name", cmd(&CreateAccount{Name: "../etc"}), KindInvalid, []string{"account name", "'.'"}},
		{"negative weight", cmd(&CreateAccount{Name: "x", Weight: f64(-1)}), KindInvalid, []string{"weight"}},
		{"account exists", cmd(&CreateAccount{Name: "phys"}), KindExists, []string{"phys", "already exists"}},
		{"update unknown account", cmd(&UpdateAccount{Name: "bio", Weight: f64(1)}), KindNotFound, []string{"bio"}},
		{"user exists", cmd(&CreateUser{Name: "ann"}), KindExists, []string{"ann"}},
		{"user of unknown account", cmd(&CreateUser{Name: "bob", Accounts: []string{"bio"}}), KindNotFound, []string{"bio", "create it"}},
		{"account listed twice", cmd(&CreateUser{Name: "bob", Accounts: []string{"phys", "phys"}}), KindInvalid, []string{`account "phys" is listed twice`}},
		{"resource without a weight", cmd(&UpdateSettings{AddResources: []string{"gpu"}}), KindInvalid, []string{`"gpu"`, "billing weight", "free"}},
		{"resource listed twice", cmd(&UpdateSettings{AddResources: []string{"gpu", "gpu"}}), KindInvalid, []string{`resource "gpu" is listed twice`}},
		{"membership of unknown user", cmd(&AddMembership{User: "bob", Account: "phys"}), KindNotFound, []string{"bob"}},
		{"grant to unknown account", cmd(&Grant{Account: "bio", Amount: 1}), KindNotFound, []string{"bio"}},
		{"grant id reused", cmd(&Grant{ID: "g1", Account: "phys", Amount: 7}), KindExists, []string{"g1", "new id"}},
		{"grant expired", cmd(&Grant{Account: "phys", Amount: 7, Expires: past}), KindInvalid, []string{"expires", "later"}},
		{"zero grant", cmd(&Grant{Account: "phys"}), KindInvalid, []string{"positive"}},
		{"unknown policy", cmd(&UpdateSettings{Policy: strp("fifo")}), KindInvalid, []string{"fifo", "hmrf"}},
		{"bad window", cmd(&UpdateSettings{Window: strp("tumbling:0s")}), KindInvalid, []string{"window"}},
		{"ltrf on unknown resource", cmd(&UpdateSettings{LTRFResource: strp("gpu")}), KindInvalid, []string{"gpu", "cpu, mem, mic"}},
		{"billing unknown resource", cmd(&UpdateSettings{BillingWeights: map[string]float64{"gpu": 1}}), KindInvalid, []string{"gpu", "add the resource"}},
		{"empty settings", cmd(&UpdateSettings{}), KindInvalid, []string{"nothing to update"}},
		{"submit unknown account", cmd(job(func(j *SubmitJob) { j.Account = "bio" })), KindNotFound, []string{"bio"}},
		{"submit unknown user", cmd(job(func(j *SubmitJob) { j.User = "bob" })), KindNotFound, []string{"bob"}},
		{"submit not a member", cmd(job(func(j *SubmitJob) { j.Account = "chem" })), KindPermission, []string{"ann", "chem", "membership"}},
		{"submit unknown resource", cmd(job(func(j *SubmitJob) { j.Demand = map[string]float64{"gpu": 1} })), KindInvalid, []string{"gpu", "add it"}},
		{"submit too expensive", cmd(job(func(j *SubmitJob) { j.Tasks = 1000 })), KindInsufficientFunds, []string{"1000 SU", "available 92", "grant"}},
		{"submit reused request id", cmd(job(func(j *SubmitJob) { j.RequestID = "r1" })), KindExists, []string{"r1", "new request id"}},
		{"submit no tasks", cmd(job(func(j *SubmitJob) { j.Tasks = 0 })), KindInvalid, []string{"tasks"}},
		{"submit NaN demand", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(1, TypeSubmitJob, at, `{"account":"phys","user":"ann","demand":{"cpu":NaN},"tasks":1,"walltime":1,"command":["x"]}`)
		}, KindInvalid, []string{"malformed"}},
		{"cancel unknown job", cmd(&CancelJob{JobID: 99}), KindNotFound, []string{"99"}},
		{"assign nothing", cmd(&Assign{}), KindInvalid, []string{"placements"}},
		{"events of unknown kind", cmd(&TaskEvents{Events: []TaskEvent{{JobID: 1, Task: 0, Attempt: 1, Kind: "paused"}}}), KindInvalid, []string{"paused"}},
		{"node down unknown", cmd(&NodeDown{ID: "n9"}), KindNotFound, []string{"n9"}},
		{"node with NaN", func(_ testing.TB, at ledger.Time) []byte {
			return rawEntry(1, TypeNodeUp, at, `{"id":"n2","capacity":{"cpu":-1}}`)
		}, KindInvalid, []string{"capacity[cpu]"}},
	}
	h := busyHarness(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := stateDigest(t, h.f)
			later := t0.Add(24 * time.Hour)
			view := h.f.View(later)
			h.now = h.now.Add(time.Second)
			resp := h.f.Apply(h.log.addRaw(c.entry(t, h.now)))
			r := resp.(*Result)
			if r.Err == nil {
				t.Fatalf("accepted; want %v", c.code)
			}
			if KindOf(r.Err) != c.code {
				t.Fatalf("kind %v (%v), want %v", KindOf(r.Err), r.Err, c.code)
			}
			for _, w := range c.words {
				if !strings.Contains(r.Err.Error(), w) {
					t.Errorf("message %q does not mention %q", r.Err, w)
				}
			}
			if stateDigest(t, h.f) != before {
				t.Fatal("a refused command changed the stored state")
			}
			if after := h.f.View(later); !reflect.DeepEqual(view, after) {
				t.Fatal("a refused command changed the in-memory state")
			}
		})
	}
	// After all those refusals the FSM still holds exactly what it held,
	// even across a restart.
	if err := h.f.Close(); err != nil {
		t.Fatal(err)
	}
	f := openFSM(t, h.dir)
	if stateDigest(t, f) != stateDigest(t, busyHarness(t).f) {
		t.Fatal("state after refusals differs from the same state built without them")
	}
}

func cmd(c Command) func(testing.TB, ledger.Time) []byte {
	return func(t testing.TB, at ledger.Time) []byte { return rawCommand(t, at, c) }
}

func job(change func(*SubmitJob)) *SubmitJob {
	j := &SubmitJob{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1, Walltime: time.Hour, Command: []string{"x"}}
	change(j)
	return j
}

func strp(s string) *string { return &s }
