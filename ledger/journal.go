package ledger

import (
	"encoding/hex"
	"fmt"
	"time"
)

// The two ledger accounts of the SU book that are not research accounts.
// Their names start with '@', which research account names may not, so they
// can never collide with one.
const (
	// GrantsAccount is the source every grant is drawn from: its balance is
	// minus the SU ever granted.
	GrantsAccount = "@grants"
	// CenterAccount receives every charge: its balance is the SU the center
	// has billed.
	CenterAccount = "@center"
)

// EntryKind says what a journal entry records.
type EntryKind uint8

// The kinds of journal entry. In double-entry terms (debit → credit):
const (
	// EntryGrant posts Amount GrantsAccount → Account. ID is the grant id;
	// Expires, when non-zero, is when its unused remainder stops covering
	// new holds.
	EntryGrant EntryKind = iota + 1
	// EntryHold opens a pending transfer of Amount Account → CenterAccount
	// (the job's worst case). ID is the hold id; Funds are the grants it
	// reserves.
	EntryHold
	// EntryCharge posts Amount of hold HoldID Account → CenterAccount. ID is
	// the charge id; Requested is the cost asked for, Amount what was posted
	// (Requested capped at what was left of the hold); Detail says how the
	// cost was computed; Funds are the grants it consumed.
	EntryCharge
	// EntryRelease voids the rest (Amount) of hold HoldID and closes it; ID
	// is the hold id too. Funds are the reservations given back.
	EntryRelease
)

// String returns the kind's name ("grant", "hold", "charge", "release").
func (k EntryKind) String() string {
	switch k {
	case EntryGrant:
		return "grant"
	case EntryHold:
		return "hold"
	case EntryCharge:
		return "charge"
	case EntryRelease:
		return "release"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText writes the kind's name, so JSON shows "charge" and not 3.
func (k EntryKind) MarshalText() ([]byte, error) {
	if k < EntryGrant || k > EntryRelease {
		return nil, fmt.Errorf("unknown journal entry kind %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText reads a kind's name.
func (k *EntryKind) UnmarshalText(text []byte) error {
	for i := EntryGrant; i <= EntryRelease; i++ {
		if string(text) == i.String() {
			*k = i
			return nil
		}
	}
	return fmt.Errorf("unknown journal entry kind %q: want grant, hold, charge or release", text)
}

// Hash is a SHA-256 digest that chains journal entries together.
type Hash [32]byte

// String returns the hash in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText writes the hash in hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads a hash written in hex; anything but exactly 64 hex
// digits (a truncated or padded hash) is refused.
func (h *Hash) UnmarshalText(text []byte) error {
	if len(text) != 2*len(h) {
		return fmt.Errorf("hash %q has %d hex digits, want %d", text, len(text), 2*len(h))
	}
	var v Hash
	if _, err := hex.Decode(v[:], text); err != nil {
		return fmt.Errorf("hash %q: %w", text, err)
	}
	*h = v
	return nil
}

// Fund is the part of an entry's amount that came from (or went back to)
// one grant.
type Fund struct {
	Grant  string `json:"grant"`
	Amount SU     `json:"amount"`
}

// ChargeDetail records how a charge's cost was computed, so that an auditor
// can recompute it: Cost(Runtime, Demand, Weights, Rule). Resources names the
// positions of Demand and Weights (the cluster's resource list when the
// charge was made); it may be empty. Rule is BillingSum in every charge
// made before billing rules existed.
type ChargeDetail struct {
	Runtime   time.Duration  `json:"runtime"`
	Demand    Vector         `json:"demand,omitempty"`
	Weights   BillingWeights `json:"weights,omitempty"`
	Resources []string       `json:"resources,omitempty"`
	Rule      BillingRule    `json:"rule,omitempty"`
}

// Clone returns a deep copy of d.
func (d ChargeDetail) Clone() ChargeDetail {
	d.Demand = d.Demand.Clone()
	d.Weights = d.Weights.Clone()
	if d.Resources != nil {
		d.Resources = append([]string(nil), d.Resources...)
	}
	return d
}

// JournalEntry is one entry of the SU book's append-only journal. Entries are
// numbered from Seq 1 without gaps; each carries the Hash of the one before
// it (zero for the first) and its own Hash, the SHA-256 of its canonical
// encoding (MarshalBinary without the trailing hash), so changing, removing,
// inserting or reordering entries breaks the chain.
type JournalEntry struct {
	Seq     uint64    `json:"seq"`
	Time    Time      `json:"time"`
	Kind    EntryKind `json:"kind"`
	ID      string    `json:"id"`
	HoldID  string    `json:"hold_id,omitempty"`
	Account string    `json:"account"`
	Amount  SU        `json:"amount"`
	// Expires is a grant's expiry (0: never).
	Expires Time `json:"expires,omitempty"`
	// Requested is the cost a charge asked for before capping.
	Requested SU           `json:"requested,omitempty"`
	Funds     []Fund       `json:"funds,omitempty"`
	Detail    ChargeDetail `json:"detail,omitzero"`
	PrevHash  Hash         `json:"prev_hash"`
	Hash      Hash         `json:"hash"`
}

// Clone returns a deep copy of e, sharing nothing with it.
func (e JournalEntry) Clone() JournalEntry {
	if e.Funds != nil {
		e.Funds = append([]Fund(nil), e.Funds...)
	}
	e.Detail = e.Detail.Clone()
	return e
}

// Transfer returns the ledger accounts the entry moves money between, in
// double-entry terms: debit (money leaves) and credit (money arrives). For a
// hold and a release the transfer is pending: it changes what is held, not
// the posted balances.
func (e JournalEntry) Transfer() (debit, credit string) {
	if e.Kind == EntryGrant {
		return GrantsAccount, e.Account
	}
	return e.Account, CenterAccount
}
