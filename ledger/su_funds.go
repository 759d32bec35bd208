package ledger

import "slices"

// suGrant is one grant: a lot of SU with an optional expiry. Its amount is
// split into what charges consumed, what open holds reserve, and the free
// rest; only the free rest of an unexpired grant covers new holds.
type suGrant struct {
	id       string
	account  string
	amount   SU
	expires  Time // 0: never
	seq      uint64
	consumed SU
	reserved SU
}

func (g *suGrant) free() SU { return g.amount - g.consumed - g.reserved }

// expiredAt reports whether the grant no longer covers new holds at t.
func (g *suGrant) expiredAt(t Time) bool { return g.expires != 0 && t >= g.expires }

// suSpendOrder orders an account's grants the way they are spent: earliest
// expiry first, grants that never expire last, and in grant order among
// equals. Spending money that is about to expire first keeps the most
// purchasing power for the account.
func suSpendOrder(a, b *suGrant) int {
	switch {
	case a.expires == b.expires:
	case a.expires == 0:
		return 1
	case b.expires == 0:
		return -1
	case a.expires < b.expires:
		return -1
	default:
		return 1
	}
	switch {
	case a.seq < b.seq:
		return -1
	case a.seq > b.seq:
		return 1
	}
	return 0
}

// suAccount is one research account's side of the book.
type suAccount struct {
	name    string
	granted SU
	charged SU
	held    SU
	grants  []*suGrant // in suSpendOrder
}

func (a *suAccount) addGrant(g *suGrant) {
	i, _ := slices.BinarySearchFunc(a.grants, g, suSpendOrder)
	a.grants = slices.Insert(a.grants, i, g)
}

// available is the free rest of the grants that have not expired at t.
func (a *suAccount) available(t Time) SU {
	var sum SU
	for _, g := range a.grants {
		if !g.expiredAt(t) {
			sum += g.free()
		}
	}
	return sum
}

// suReservation is the part of a hold that one grant still covers.
type suReservation struct {
	grant  *suGrant
	amount SU
}

// reserve takes amount from the free rest of the grants unexpired at t, in
// spending order. The caller has checked that available(t) covers it.
func (a *suAccount) reserve(amount SU, t Time) ([]suReservation, []Fund) {
	var res []suReservation
	var funds []Fund
	for _, g := range a.grants {
		if amount == 0 {
			break
		}
		if g.expiredAt(t) {
			continue
		}
		take := min(g.free(), amount)
		if take <= 0 {
			continue
		}
		g.reserved += take
		amount -= take
		res = append(res, suReservation{grant: g, amount: take})
		funds = append(funds, Fund{Grant: g.id, Amount: take})
	}
	return res, funds
}

// consume turns amount of the reservations into charges, in the order they
// were reserved (which is spending order). A charge may consume grants that
// have expired since the hold was placed: the hold stays valid.
func consumeReservations(res []suReservation, amount SU) []Fund {
	var funds []Fund
	for i := range res {
		if amount == 0 {
			break
		}
		r := &res[i]
		take := min(r.amount, amount)
		if take <= 0 {
			continue
		}
		r.amount -= take
		r.grant.reserved -= take
		r.grant.consumed += take
		amount -= take
		funds = append(funds, Fund{Grant: r.grant.id, Amount: take})
	}
	return funds
}

// releaseReservations gives what is left of the reservations back to their
// grants. What goes back to an expired grant is expired from then on.
func releaseReservations(res []suReservation) []Fund {
	var funds []Fund
	for i := range res {
		r := &res[i]
		if r.amount == 0 {
			continue
		}
		r.grant.reserved -= r.amount
		funds = append(funds, Fund{Grant: r.grant.id, Amount: r.amount})
		r.amount = 0
	}
	return funds
}
