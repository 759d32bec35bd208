package ledger

import (
	"fmt"
	"unicode/utf8"
)

// SUBook is the double-entry service-unit book. Grants credit research
// accounts from GrantsAccount; charges move SU from an account to
// CenterAccount in two phases: a hold (pending debit) for a job's worst case
// at submission, a charge per task posted against the hold, and a release
// that voids the rest when the job ends.
//
// Which money pays: a hold reserves the free rest of the account's
// unexpired grants, earliest expiry first (grants that never expire last);
// its charges consume those reservations in the same order, and its release
// gives the rest back. A grant that expires stops covering new holds, but a
// hold placed before the expiry stays fully covered by what it reserved.
// Grant balances never decay: decay and windows belong to the fairness book.
//
// Every operation is idempotent by id (grant id, hold id, charge id): a
// repeat with the same content returns the entries of the original and
// writes nothing; the same id with different content is refused with
// ErrIDConflict. Every operation that succeeds appends one entry to the
// hash-chained journal and returns it, so the FSM can persist exactly that
// in the same transaction. Times earlier than the journal's last entry are
// treated as that time, so the journal's times never go backwards.
//
// The book is pure and single-threaded: no clock, no locks. The FSM applies
// commands one at a time, which is also what makes concurrent submissions
// unable to overdraw an account.
type SUBook struct {
	journal  journalStore
	accounts map[string]*suAccount
	grants   map[string]*suGrant
	holds    map[string]*suHold
	// charges finds a charge's journal entry by its id, for retries. It
	// is keyed by the id's 64-bit FNV-1a hash, which costs a fifth of
	// keeping every id ever charged as a string; a hit is confirmed
	// against the entry's id, and an id whose hash an earlier id already
	// took is kept, whole, in chargeClashes.
	charges       map[uint64]int
	chargeClashes map[string]int
	chargeKey     func(id string) uint64 // fnv1a; tests make ids clash
	issued        SU                     // SU ever granted, over all accounts
}

// suHold is a job's pending debit.
type suHold struct {
	id       string
	account  *suAccount
	amount   SU
	charged  SU
	res      []suReservation
	entry    int // index of the hold's journal entry
	released int // index of the release entry, or -1 while open
	voided   SU  // what the release gave back
}

func (h *suHold) remaining() SU { return h.amount - h.charged }

// NewSUBook returns an empty book.
func NewSUBook() *SUBook {
	return &SUBook{
		accounts:  make(map[string]*suAccount),
		grants:    make(map[string]*suGrant),
		holds:     make(map[string]*suHold),
		charges:   make(map[uint64]int),
		chargeKey: fnv1a,
	}
}

// Grant credits amount (positive) to account from GrantsAccount. A non-zero
// expires is when the grant's unused rest stops covering new holds; it must
// be later than at. id makes the grant idempotent.
func (b *SUBook) Grant(id, account string, amount SU, expires Time, at Time) ([]JournalEntry, error) {
	return b.result(b.grant(id, account, amount, expires, at))
}

// Hold places a pending debit of amount (the job's worst case, see
// WorstCaseHold) on account, if the account's available SU cover it;
// otherwise it returns an *InsufficientFundsError carrying the balance.
// id (the job id) makes the hold idempotent and names it for Charge and
// Release.
func (b *SUBook) Hold(id, account string, amount SU, at Time) ([]JournalEntry, error) {
	return b.result(b.hold(id, account, amount, at))
}

// Charge posts amount (a task's actual cost) against hold holdID, moving it
// from the account to CenterAccount. A charge larger than what is left of
// the hold is capped at that rest: the hold is the most the job can be
// billed, and the entry records both the amount asked (Requested) and the
// amount posted. detail says how amount was computed; when it is not the
// zero value, amount must equal Cost(detail.Runtime, detail.Demand,
// detail.Weights, detail.Rule), so every detailed charge in the journal can be
// recomputed. chargeID (task id and attempt) makes the charge idempotent.
func (b *SUBook) Charge(holdID, chargeID string, amount SU, detail ChargeDetail, at Time) ([]JournalEntry, error) {
	return b.result(b.charge(holdID, chargeID, amount, detail, at))
}

// Release voids what is left of hold holdID and closes it: later charges
// against it are refused with ErrHoldClosed (repeats of earlier charges are
// still recognised). Releasing twice returns the first release's entry.
func (b *SUBook) Release(holdID string, at Time) ([]JournalEntry, error) {
	return b.result(b.release(holdID, at))
}

// result turns the index of an operation's entry into the public answer, a
// copy that shares nothing with the book.
func (b *SUBook) result(index int, err error) ([]JournalEntry, error) {
	if err != nil {
		return nil, err
	}
	e, err := b.journal.at(index)
	if err != nil {
		return nil, err
	}
	return []JournalEntry{e}, nil
}

func (b *SUBook) grant(id, account string, amount SU, expires Time, at Time) (int, error) {
	if err := checkSUName("grant id", id); err != nil {
		return 0, err
	}
	if err := checkSUAccount(account); err != nil {
		return 0, err
	}
	if amount <= 0 {
		return 0, badSUArgument("grant %q of %v SU: a grant must be positive", id, amount)
	}
	if g, ok := b.grants[id]; ok {
		if g.account != account || g.amount != amount || g.expires != expires {
			return 0, fmt.Errorf("%w: grant %q already gave %v SU to account %q (expires %d); a retry must repeat it exactly, a new grant needs a new id",
				ErrIDConflict, id, g.amount, g.account, g.expires)
		}
		return int(g.seq - 1), nil
	}
	at = b.clamp(at)
	if expires != 0 && expires <= at {
		return 0, badSUArgument("grant %q expires at %d, not after its grant time %d: give a later expiry, or 0 for never", id, expires, at)
	}
	issued, ok := suAdd(b.issued, amount)
	if !ok {
		return 0, badSUArgument("grant %q of %v SU would take the SU ever granted past %v SU", id, amount, MaxSU)
	}
	a := b.account(account)
	g := &suGrant{id: id, account: account, amount: amount, expires: expires, seq: b.nextSeq()}
	a.addGrant(g)
	a.granted += amount
	b.issued = issued
	b.grants[id] = g
	return b.append(JournalEntry{Time: at, Kind: EntryGrant, ID: id, Account: account, Amount: amount, Expires: expires}), nil
}

func (b *SUBook) hold(id, account string, amount SU, at Time) (int, error) {
	if err := checkSUName("hold id", id); err != nil {
		return 0, err
	}
	if err := checkSUAccount(account); err != nil {
		return 0, err
	}
	if amount < 0 {
		return 0, badSUArgument("hold %q of %v SU: a hold cannot be negative", id, amount)
	}
	if h, ok := b.holds[id]; ok {
		if h.account.name != account || h.amount != amount {
			return 0, fmt.Errorf("%w: hold %q already holds %v SU for account %q; a retry must repeat it exactly, another job needs a new hold id",
				ErrIDConflict, id, h.amount, h.account.name)
		}
		return h.entry, nil
	}
	at = b.clamp(at)
	a := b.accounts[account]
	var available SU
	if a != nil {
		available = a.available(at)
	}
	if amount > available {
		return 0, &InsufficientFundsError{HoldID: id, Cost: amount, Balance: b.Balance(account, at)}
	}
	a = b.account(account)
	res, funds := a.reserve(amount, at)
	a.held += amount
	h := &suHold{id: id, account: a, amount: amount, res: res, released: -1}
	h.entry = b.append(JournalEntry{Time: at, Kind: EntryHold, ID: id, Account: account, Amount: amount, Funds: funds})
	b.holds[id] = h
	return h.entry, nil
}

func (b *SUBook) charge(holdID, chargeID string, amount SU, detail ChargeDetail, at Time) (int, error) {
	if err := checkSUName("hold id", holdID); err != nil {
		return 0, err
	}
	if err := checkSUName("charge id", chargeID); err != nil {
		return 0, err
	}
	if amount < 0 {
		return 0, badSUArgument("charge %q of %v SU: a charge cannot be negative", chargeID, amount)
	}
	if err := checkChargeDetail(chargeID, amount, detail); err != nil {
		return 0, err
	}
	i, orig, ok, err := b.findCharge(chargeID)
	if err != nil {
		return 0, err
	}
	if ok {
		if orig.HoldID != holdID || orig.Requested != amount || !sameChargeDetail(orig.Detail, detail) {
			return 0, fmt.Errorf("%w: charge %q was already posted against hold %q for %v SU with different details; a retry must repeat it exactly, another task or attempt needs a new charge id",
				ErrIDConflict, chargeID, orig.HoldID, orig.Requested)
		}
		return i, nil
	}
	h, ok := b.holds[holdID]
	if !ok {
		return 0, fmt.Errorf("%w %q: charge %q needs the job's hold; place the hold at submission before posting charges", ErrUnknownHold, holdID, chargeID)
	}
	if h.released >= 0 {
		return 0, fmt.Errorf("%w: hold %q was released by entry %d, so charge %q cannot be posted; post every task's charge before releasing the job's hold",
			ErrHoldClosed, holdID, h.released+1, chargeID)
	}
	at = b.clamp(at)
	posted := min(amount, h.remaining())
	funds := consumeReservations(h.res, posted)
	h.charged += posted
	h.account.charged += posted
	h.account.held -= posted
	i = b.append(JournalEntry{
		Time: at, Kind: EntryCharge, ID: chargeID, HoldID: holdID, Account: h.account.name,
		Amount: posted, Requested: amount, Funds: funds, Detail: detail.Clone(),
	})
	b.addCharge(chargeID, i)
	return i, nil
}

// findCharge returns the journal index and entry of charge id, if posted.
func (b *SUBook) findCharge(id string) (int, JournalEntry, bool, error) {
	i, ok := b.chargeClashes[id]
	if !ok {
		if i, ok = b.charges[b.chargeKey(id)]; !ok {
			return 0, JournalEntry{}, false, nil
		}
	}
	e, err := b.journal.at(i)
	if err != nil {
		return 0, JournalEntry{}, false, err
	}
	return i, e, e.ID == id, nil
}

func (b *SUBook) addCharge(id string, index int) {
	key := b.chargeKey(id)
	if _, taken := b.charges[key]; !taken {
		b.charges[key] = index
		return
	}
	if b.chargeClashes == nil {
		b.chargeClashes = make(map[string]int)
	}
	b.chargeClashes[id] = index
}

// fnv1a is the 64-bit FNV-1a hash of a string (hash/fnv's, without the
// allocation of writing a string to a hash.Hash).
func fnv1a(id string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= prime64
	}
	return h
}

func (b *SUBook) release(holdID string, at Time) (int, error) {
	if err := checkSUName("hold id", holdID); err != nil {
		return 0, err
	}
	h, ok := b.holds[holdID]
	if !ok {
		return 0, fmt.Errorf("%w %q: nothing to release; check the job id", ErrUnknownHold, holdID)
	}
	if h.released >= 0 {
		return h.released, nil
	}
	at = b.clamp(at)
	rest := h.remaining()
	funds := releaseReservations(h.res)
	h.res = nil
	h.account.held -= rest
	h.voided = rest
	h.released = b.append(JournalEntry{Time: at, Kind: EntryRelease, ID: holdID, HoldID: holdID, Account: h.account.name, Amount: rest, Funds: funds})
	return h.released, nil
}

// account returns the named account, creating it empty on first use.
func (b *SUBook) account(name string) *suAccount {
	a, ok := b.accounts[name]
	if !ok {
		a = &suAccount{name: name}
		b.accounts[name] = a
	}
	return a
}

func (b *SUBook) nextSeq() uint64 { return uint64(b.journal.len()) + 1 }

// clamp keeps the journal's times non-decreasing.
func (b *SUBook) clamp(at Time) Time {
	if last := b.journal.last(); last != nil && at < last.Time {
		return last.Time
	}
	return at
}

// append numbers, chains and hashes e, adds it to the journal and returns
// its index.
func (b *SUBook) append(e JournalEntry) int { return b.journal.append(e) }

// maxSUNameBytes bounds ids and account names, which every journal entry
// carries.
const maxSUNameBytes = 256

func checkSUName(what, s string) error {
	switch {
	case s == "":
		return badSUArgument("%s is empty: give a non-empty %s", what, what)
	case len(s) > maxSUNameBytes:
		return badSUArgument("%s %.32q… is %d bytes long: use at most %d bytes", what, s, len(s), maxSUNameBytes)
	case !utf8.ValidString(s):
		return badSUArgument("%s %q is not valid UTF-8", what, s)
	}
	return nil
}

func checkSUAccount(name string) error {
	if err := checkSUName("account", name); err != nil {
		return err
	}
	if name[0] == '@' {
		return badSUArgument("account %q starts with '@', which is reserved for the book's own accounts (%s, %s): choose another name",
			name, GrantsAccount, CenterAccount)
	}
	return nil
}
