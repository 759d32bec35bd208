package fsm

import (
	"errors"
	"fmt"

	"github.com/longfair/longfair/ledger"
)

// Grant credits Amount to Account. ID makes it idempotent; an empty ID gets
// one assigned by the FSM ("g-<n>"). Expires (0: never) is when the unused
// remainder stops covering new holds.
type Grant struct {
	ID      string      `json:"id,omitempty"`
	Account string      `json:"account"`
	Amount  ledger.SU   `json:"amount"`
	Expires ledger.Time `json:"expires,omitempty"`
	Note    string      `json:"note,omitempty"`
}

func (*Grant) Type() CommandType { return TypeGrant }

func (c *Grant) validate(r rules) *Error {
	if c.ID != "" {
		if err := checkName("grant id", c.ID); err != nil {
			return err
		}
	}
	if err := checkName("account name", c.Account); err != nil {
		return err
	}
	if c.Amount <= 0 {
		return invalid("grant amount %v SU must be positive", c.Amount)
	}
	if c.Expires < 0 {
		return invalid("grant expiry %d is before 1970: leave it unset for a grant that never expires", c.Expires)
	}
	return r.text("grant note", c.Note, MaxNoteBytes)
}

type grantRecord struct {
	ID        string      `json:"id"`
	Account   string      `json:"account"`
	Amount    ledger.SU   `json:"amount"`
	Expires   ledger.Time `json:"expires,omitempty"`
	GrantedAt ledger.Time `json:"granted_at"`
	Note      string      `json:"note,omitempty"`
}

// grant applies Grant; the result is a GrantInfo.
func (b *batch) grant(c *Grant, t ledger.Time) (any, error) {
	st := b.st
	if _, ok := st.accounts[c.Account]; !ok {
		return nil, notFound("account %q does not exist: create it before granting it SUs", c.Account)
	}
	grants := b.bucket(bucketGrants)
	id, next := c.ID, st.nextGrant
	if id == "" {
		for {
			next++
			id = fmt.Sprintf("g-%d", next)
			if grants.Get([]byte(id)) == nil {
				break
			}
		}
	}
	var old grantRecord
	if ok, err := getJSON(grants, []byte(id), &old); err != nil {
		return nil, err
	} else if ok {
		if old.Account != c.Account || old.Amount != c.Amount || old.Expires != c.Expires || old.Note != c.Note {
			return nil, refuse(KindExists, "grant %q already gave %v SU to account %q: a retry must repeat it exactly; a new grant needs a new id", id, old.Amount, old.Account)
		}
		return grantInfo(&old), nil
	}
	if c.Expires != 0 && c.Expires <= t {
		return nil, invalid("grant %q expires at %s, which is not in the future: give a later expiry, or none", id, formatTime(c.Expires))
	}
	entries, err := st.su.Grant(id, c.Account, c.Amount, c.Expires, t)
	if err != nil {
		return nil, ledgerRefusal(err)
	}
	g := &grantRecord{ID: id, Account: c.Account, Amount: c.Amount, Expires: c.Expires, GrantedAt: t, Note: c.Note}
	if err := putJSON(grants, []byte(id), g); err != nil {
		return nil, err
	}
	if err := b.saveJournal(entries); err != nil {
		return nil, err
	}
	st.nextGrant = next
	return grantInfo(g), nil
}

// saveJournal stores journal entries the SU book appended.
func (b *batch) saveJournal(entries []ledger.JournalEntry) error {
	bk := b.bucket(bucketJournal)
	for _, e := range entries {
		data, err := e.MarshalBinary()
		if err != nil {
			return fmt.Errorf("encode journal entry %d: %w", e.Seq, err)
		}
		if err := bk.Put(u64(e.Seq), data); err != nil {
			return fmt.Errorf("store journal entry %d: %w", e.Seq, err)
		}
	}
	return nil
}

// ledgerRefusal maps an SU book error to a refusal of its kind; anything
// else the book refuses (ErrBadSUArgument) is invalid.
func ledgerRefusal(err error) *Error {
	kind := KindInvalid
	switch {
	case errors.Is(err, ledger.ErrInsufficientFunds):
		kind = KindInsufficientFunds
	case errors.Is(err, ledger.ErrIDConflict):
		kind = KindExists
	case errors.Is(err, ledger.ErrUnknownHold):
		kind = KindNotFound
	case errors.Is(err, ledger.ErrHoldClosed):
		kind = KindPrecondition
	}
	return &Error{Kind: kind, Msg: err.Error()}
}
