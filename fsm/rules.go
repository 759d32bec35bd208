package fsm

import (
	"math"
	"time"
	"unicode/utf8"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ledger"
)

// maxNameLength bounds account, user, grant, request and resource names.
const maxNameLength = core.MaxNameLength

// maxNodeIDLength bounds node ids, which are often fully qualified host names.
const maxNodeIDLength = core.MaxNodeIDLength

// checkName refuses a name that is empty, too long, or not made of letters,
// digits, '.', '_' and '-' starting with a letter or digit (core.CheckName).
// Names appear in keys, logs and command lines, so they are kept plain.
func checkName(field, name string) *Error { return invalidIf(core.CheckName(field, name)) }

// checkNodeID is checkName with room for host names and ports
// (core.CheckNodeID).
func checkNodeID(field, id string) *Error { return invalidIf(core.CheckNodeID(field, id)) }

// invalidIf turns a core rule's error into a refusal.
func invalidIf(err error) *Error {
	if err == nil {
		return nil
	}
	return invalid("%s", err)
}

// rules are the shape rules of one entry: those of the envelope version it
// was written with. A rule added in a later version applies only to
// entries of that version or later, so a log written by an older release
// replays to exactly the state it gave then, while a
// leader of this release can no longer propose what the rule refuses.
type rules struct{ version uint8 }

// strict reports whether the entry is held to the rules version 3 added:
// core's text rule (no control or bidirectional formatting characters)
// and the walltime minimum. Version-1 entries are held to neither.
func (r rules) strict() bool { return r.version != legacyVersion }

// text refuses free text that is too long or not UTF-8 and, from version
// 3, that holds a control or bidirectional formatting character.
func (r rules) text(field, s string, limit int) *Error {
	if r.strict() {
		return invalidIf(core.CheckText(field, s, limit))
	}
	if len(s) > limit {
		return invalid("%s is %d bytes long: use at most %d", field, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return invalid("%s is not valid UTF-8", field)
	}
	return nil
}

// commandText is text for a command's arguments, which may hold newlines
// and tabs (a shell script).
func (r rules) commandText(field, s string, limit int) *Error {
	if r.strict() {
		return invalidIf(core.CheckCommandText(field, s, limit))
	}
	return r.text(field, s, limit)
}

// minWalltime is the shortest walltime a job may have: any positive one
// before version 3, core.MinWalltime from it.
func (r rules) minWalltime() time.Duration {
	if r.strict() {
		return core.MinWalltime
	}
	return time.Nanosecond
}

// fundsRetries reports whether a lost attempt whose task runs again is
// charged against a hold of its own, leaving its job's hold whole for the
// rerun (version 4). Before, it was charged against its job's hold, priced
// for one run per task, so a rerun could run past what was left of it,
// uncharged.
func (r rules) fundsRetries() bool { return r.version >= limitsVersion }

// MaxQuantity bounds every resource quantity, weight and contribution
// (ledger.MaxQuantity).
const MaxQuantity = ledger.MaxQuantity

// checkQuantity refuses a quantity that is not finite, non-negative and at
// most MaxQuantity.
func checkQuantity(field string, x float64) *Error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 || x > MaxQuantity {
		return invalid("%s is %v: give a finite number from 0 to %g", field, x, MaxQuantity)
	}
	return nil
}

// checkQuantities checks a named resource map: valid names, valid quantities.
func checkQuantities(field string, q map[string]float64) *Error {
	for _, name := range sortedKeys(q) {
		if err := checkName(field+" resource name", name); err != nil {
			return err
		}
		if err := checkQuantity(field+"["+name+"]", q[name]); err != nil {
			return err
		}
	}
	return nil
}
