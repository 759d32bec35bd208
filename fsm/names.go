package fsm

import (
	"math"
	"unicode/utf8"

	"github.com/longfair/longfair/ledger"
)

// maxNameLength bounds account, user, grant, request and resource names.
const maxNameLength = 64

// maxNodeIDLength bounds node ids, which are often fully qualified host names.
const maxNodeIDLength = 255

// checkName refuses a name that is empty, too long, or not made of letters,
// digits, '.', '_' and '-' starting with a letter or digit. Names appear in
// keys, logs and command lines, so they are kept plain.
func checkName(field, name string) *Error {
	if name == "" {
		return invalid("%s is empty: give a name of letters, digits, '.', '_' or '-'", field)
	}
	if len(name) > maxNameLength {
		return invalid("%s %.16q… is %d bytes long: use at most %d", field, name, len(name), maxNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return invalid("%s %q has %q at position %d: use letters, digits, '.', '_' or '-', starting with a letter or digit", field, name, c, i)
		}
	}
	return nil
}

// checkNodeID is checkName with room for host names and ports.
func checkNodeID(field, id string) *Error {
	if id == "" {
		return invalid("%s is empty: give the node's id (usually its host name)", field)
	}
	if len(id) > maxNodeIDLength {
		return invalid("%s is %d bytes long: use at most %d", field, len(id), maxNodeIDLength)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-' && c != ':') {
			return invalid("%s %q has %q at position %d: use letters, digits, '.', '_', '-' or ':', starting with a letter or digit", field, id, c, i)
		}
	}
	return nil
}

// checkText refuses free text that is too long or not UTF-8.
func checkText(field, s string, limit int) *Error {
	if len(s) > limit {
		return invalid("%s is %d bytes long: use at most %d", field, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return invalid("%s is not valid UTF-8", field)
	}
	return nil
}

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
