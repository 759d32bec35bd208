package ledger

import "slices"

// Balance is an account's SU position at a time. Its parts always add up:
// Granted = Charged + Held + Expired + Available.
type Balance struct {
	Account string `json:"account"`
	// Granted is every SU ever granted to the account.
	Granted SU `json:"granted"`
	// Charged is every SU posted to the center (actual task costs).
	Charged SU `json:"charged"`
	// Held is what open holds still reserve for running or queued jobs.
	Held SU `json:"held"`
	// Expired is the unused, unreserved rest of grants expired by then.
	Expired SU `json:"expired"`
	// Available is what can cover new holds then: the free rest of the
	// unexpired grants.
	Available SU `json:"available"`
}

// Balance returns account's balance with grant expiry evaluated at at. An
// account the book has never seen has a zero balance.
func (b *SUBook) Balance(account string, at Time) Balance {
	bal := Balance{Account: account}
	a, ok := b.accounts[account]
	if !ok {
		return bal
	}
	bal.Granted, bal.Charged, bal.Held = a.granted, a.charged, a.held
	for _, g := range a.grants {
		if g.expiredAt(at) {
			bal.Expired += g.free()
		} else {
			bal.Available += g.free()
		}
	}
	return bal
}

// GrantBalance is one grant's position.
type GrantBalance struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	Amount  SU     `json:"amount"`
	Expires Time   `json:"expires,omitempty"`
	// Charged is what charges consumed of it, Held what open holds reserve.
	Charged SU `json:"charged"`
	Held    SU `json:"held"`
	// Free is the rest; it covers new holds unless Expired.
	Free    SU   `json:"free"`
	Expired bool `json:"expired"`
}

// Grants returns account's grants in the order they are spent (earliest
// expiry first), with expiry evaluated at at.
func (b *SUBook) Grants(account string, at Time) []GrantBalance {
	a, ok := b.accounts[account]
	if !ok {
		return nil
	}
	out := make([]GrantBalance, 0, len(a.grants))
	for _, g := range a.grants {
		out = append(out, GrantBalance{
			ID: g.id, Account: g.account, Amount: g.amount, Expires: g.expires,
			Charged: g.consumed, Held: g.reserved, Free: g.free(), Expired: g.expiredAt(at),
		})
	}
	return out
}

// HoldState is where a job's hold stands.
type HoldState struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	// Amount is what the hold reserved at submission.
	Amount SU `json:"amount"`
	// Charged is what its charges posted.
	Charged SU `json:"charged"`
	// Remaining is what is still reserved (0 once released).
	Remaining SU `json:"remaining"`
	// Voided is what the release gave back.
	Voided   SU   `json:"voided"`
	Released bool `json:"released"`
}

// HoldState returns the state of hold id, and false if there is no such hold.
func (b *SUBook) HoldState(id string) (HoldState, bool) {
	h, ok := b.holds[id]
	if !ok {
		return HoldState{}, false
	}
	s := HoldState{ID: h.id, Account: h.account.name, Amount: h.amount, Charged: h.charged, Released: h.released >= 0}
	if s.Released {
		s.Voided = h.voided
	} else {
		s.Remaining = h.remaining()
	}
	return s, true
}

// Accounts returns the names of the accounts the book has seen, sorted.
func (b *SUBook) Accounts() []string {
	names := make([]string, 0, len(b.accounts))
	for name := range b.accounts {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Head returns the sequence number and hash of the journal's last entry (0
// and the zero hash when it is empty). Keep a copy elsewhere: Verify can
// only tell that entries were cut off the end of a journal by comparing its
// head with a known one.
func (b *SUBook) Head() (seq uint64, hash Hash) {
	if last := b.journal.last(); last != nil {
		return last.Seq, last.Hash
	}
	return 0, Hash{}
}

// Len returns the number of journal entries.
func (b *SUBook) Len() int { return b.journal.len() }

// Journal returns a copy of the whole journal.
func (b *SUBook) Journal() ([]JournalEntry, error) { return b.JournalFrom(1, b.journal.len()) }

// JournalFrom returns a copy of at most limit entries starting at sequence
// number from (a page of the journal). Only a book that keeps its journal
// elsewhere (KeepJournalIn) can fail to read it back.
func (b *SUBook) JournalFrom(from uint64, limit int) ([]JournalEntry, error) {
	// Entry Seq n sits at index n-1: the journal has no gaps.
	n := b.journal.len()
	start := n
	if from <= uint64(n) {
		start = int(max(from, 1) - 1)
	}
	end := start + min(max(limit, 0), n-start)
	out := make([]JournalEntry, 0, end-start)
	for i := start; i < end; i++ {
		e, err := b.journal.at(i)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// KeepJournalIn tells the book that every entry it has appended is stored
// where read finds it by sequence number, so that it need not hold them:
// it drops them from memory and reads them back through read when asked
// (a retry's answer, a listing). Call it again whenever what the book
// appended since has been stored: the FSM does after each commit. An
// entry appended and not yet stored stays in memory until then.
func (b *SUBook) KeepJournalIn(read func(seq uint64) ([]byte, error)) { b.journal.forget(read) }
