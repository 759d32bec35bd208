package fsm

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// forgedText are commands whose text would drive a terminal or disguise
// itself, or whose walltime is below the minimum: every one is valid but
// for that.
func forgedText() map[string]Command {
	return map[string]Command{
		"job name with ESC":        job(func(j *SubmitJob) { j.Name = "x\x1b[2Jy" }),
		"job name with NUL":        job(func(j *SubmitJob) { j.Name = "x\x00" }),
		"job name with a newline":  job(func(j *SubmitJob) { j.Name = "x\nfake line" }),
		"job name with RLO":        job(func(j *SubmitJob) { j.Name = "report\u202Efdp.exe" }),
		"command with ESC":         job(func(j *SubmitJob) { j.Command = []string{"echo", "\x1b]0;pwned\x07"} }),
		"command with CR":          job(func(j *SubmitJob) { j.Command = []string{"echo ok\rrm -rf"} }),
		"walltime of 1ns":          job(func(j *SubmitJob) { j.Walltime = time.Nanosecond }),
		"walltime under a second":  job(func(j *SubmitJob) { j.Walltime = time.Second - 1 }),
		"grant note with ESC":      &Grant{Account: "phys", Amount: 7, Note: "\x1b[31mred"},
		"node class with newline":  &NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 1}, Class: "cpu\nx"},
		"node address with DEL":    &NodeUp{ID: "n2", Capacity: map[string]float64{"cpu": 1}, Address: "10.0.0.2:1\x7f"},
		"node-down reason with C1": &NodeDown{ID: "n1", Reason: "gone\u009b2J"},
		"token description w/ BEL": &CreateToken{ID: "t9", SecretHash: hashOf("a-secret-000000009"), Role: RoleAdmin, Description: "x\x07"},
	}
}

// A leader of this release cannot propose such a command, and an entry
// forged past that check is refused by every server and changes nothing.
func TestForgedTextIsRefusedAndChangesNothing(t *testing.T) {
	h := busyHarness(t)
	before := stateDigest(t, h.f)
	for name, c := range forgedText() {
		if _, err := Encode(h.now, c); KindOf(err) != KindInvalid {
			t.Errorf("%s: Encode gave %v, want InvalidArgument", name, err)
		}
		h.now = h.now.Add(time.Second)
		r := h.f.Apply(h.log.addRaw(rawCommand(t, h.now, c))).(*Result)
		if KindOf(r.Err) != KindInvalid {
			t.Errorf("%s: applied with %v, want InvalidArgument", name, r.Err)
			continue
		}
		if !strings.Contains(r.Err.Error(), "walltime") && !strings.Contains(r.Err.Error(), "remove it") {
			t.Errorf("%s: %q does not say what to do", name, r.Err)
		}
	}
	if stateDigest(t, h.f) != before {
		t.Fatal("a refused command changed the state")
	}
	// A command is a shell script: newlines and tabs are fine there.
	h.ok(job(func(j *SubmitJob) { j.Command = []string{"for i in 1 2; do\n\techo $i\ndone"} }))
}

// Entries written by a release before the rule (version 1) still apply,
// exactly as they did: replaying an old log gives the state it gave.
func TestOldEntriesWithControlCharactersStillApply(t *testing.T) {
	replay := func() *harness {
		h := busyHarness(t)
		cmds := forgedText()
		for _, name := range sortedKeys(cmds) {
			c := cmds[name]
			body, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			h.now = h.now.Add(time.Second)
			r := h.f.Apply(h.log.addRaw(rawEntry(legacyVersion, c.Type(), h.now, string(body)))).(*Result)
			if r.Err != nil {
				t.Errorf("%s: an old entry is refused: %v", name, r.Err)
			}
		}
		return h
	}
	a, b := replay(), replay()
	if stateDigest(t, a.f) != stateDigest(t, b.f) {
		t.Fatal("replaying the same old log twice gives two states")
	}
	list, _, err := a.f.Jobs(JobFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	jobs := 0
	for _, j := range list {
		if strings.ContainsAny(j.Name, "\x1b\x00\n") {
			jobs++
		}
	}
	if jobs != 3 {
		t.Fatalf("%d old jobs with control characters in their names were applied, want 3", jobs)
	}
}

// A grant must expire after the leader's time of its entry (not the
// clock of the server applying it): at that very instant it is refused,
// a nanosecond later it is accepted.
func TestGrantExpiryIsCheckedAgainstTheEntryTime(t *testing.T) {
	h := busyHarness(t)
	h.now = h.now.Add(time.Hour)
	before := stateDigest(t, h.f)
	r := h.f.Apply(h.log.add(t, h.now, &Grant{ID: "now", Account: "phys", Amount: 5, Expires: h.now})).(*Result)
	if KindOf(r.Err) != KindInvalid || !strings.Contains(r.Err.Error(), "not in the future") {
		t.Fatalf("a grant expiring at its entry's time: %v, want InvalidArgument", r.Err)
	}
	if stateDigest(t, h.f) != before {
		t.Fatal("the refused grant changed the state")
	}
	if r := h.f.Apply(h.log.add(t, h.now, &Grant{ID: "later", Account: "phys", Amount: 5, Expires: h.now + 1})).(*Result); r.Err != nil {
		t.Fatalf("a grant expiring after its entry's time is refused: %v", r.Err)
	}
}

// Every command has a shape check by the rules of its entry's version:
// one declared with another signature would never run.
func TestEveryCommandHasAShapeCheck(t *testing.T) {
	for ct := CommandType(1); int(ct) < len(commandNames); ct++ {
		c := newCommand(ct)
		if c == nil {
			continue
		}
		if _, ok := c.(interface{ validate(rules) *Error }); !ok {
			t.Errorf("%s (%T) has no validate(rules) method", ct, c)
		}
	}
}

// Whole units came with version 3: an old entry asking a millionth of a
// core was applied as logged by the release that wrote it, and replaying
// it must give that state again (not a refusal, not a rounded demand),
// or a replica replaying the log would diverge from those that applied it.
func TestOldSubUnitDemandsReplayAsLogged(t *testing.T) {
	h := busyHarness(t)
	c := &SubmitJob{Account: "phys", User: "ann", Name: "tiny", Demand: map[string]float64{"cpu": 1e-6}, Tasks: 1, Walltime: time.Hour, Command: []string{"true"}}
	body, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	h.now = h.now.Add(time.Second)
	r := h.f.Apply(h.log.addRaw(rawEntry(legacyVersion, c.Type(), h.now, string(body)))).(*Result)
	if r.Err != nil {
		t.Fatalf("an old sub-unit submission is refused on replay: %v", r.Err)
	}
	list, _, err := h.f.Jobs(JobFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list {
		if j.Name == "tiny" {
			if got := j.Demand["cpu"]; got != 1e-6 {
				t.Fatalf("the old job's demand is cpu=%v, want it as logged (1e-06)", got)
			}
			return
		}
	}
	t.Fatal("the old job is missing")
}
