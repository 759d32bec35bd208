package ledger

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
)

// lockedBook serializes access to a book the way the Raft FSM does: the
// book itself is single-threaded.
type lockedBook struct {
	mu   sync.Mutex
	book *SUBook
}

func (l *lockedBook) hold(id, account string, amount SU, at Time) ([]JournalEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.book.Hold(id, account, amount, at)
}

func TestConcurrentSubmissionsCannotOverdrawAHold(t *testing.T) {
	const granted = 1000
	l := &lockedBook{book: NewSUBook()}
	if _, err := l.book.Grant("g", "astro", wholeSU(granted), 0, 0); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		accepted SU
		refused  []*InsufficientFundsError
		wg       sync.WaitGroup
	)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for i := range 50 {
				amount := wholeSU(1 + rng.Int64N(30))
				_, err := l.hold(fmt.Sprintf("job-%d-%d", g, i), "astro", amount, Time(i))
				var ife *InsufficientFundsError
				mu.Lock()
				switch {
				case err == nil:
					accepted += amount
				case errors.As(err, &ife):
					refused = append(refused, ife)
				default:
					t.Error(err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if accepted > wholeSU(granted) {
		t.Fatalf("accepted holds total %v SU, more than the %d SU granted", accepted, granted)
	}
	if len(refused) == 0 {
		t.Fatal("800 holds of up to 30 SU against 1000 SU were all accepted: the test cannot fail")
	}
	bal := l.book.Balance("astro", 100)
	if bal.Held != accepted || bal.Available != wholeSU(granted)-accepted {
		t.Fatalf("balance %+v; want %v held", bal, accepted)
	}
	for _, r := range refused {
		if r.Cost <= r.Balance.Available {
			t.Fatalf("hold %s of %v was refused with %v available", r.HoldID, r.Cost, r.Balance.Available)
		}
		if r.Cost <= bal.Available {
			t.Fatalf("hold %s of %v was refused but %v is still available at the end", r.HoldID, r.Cost, bal.Available)
		}
	}
	if _, err := Verify(mustRead(l.book.Journal())); err != nil {
		t.Fatal(err)
	}
}

// TestInterleavedHoldsAreRefusedOnceTheBalanceIsUsed applies the same
// holds, whose sum exceeds the balance, in many orders: whatever the order,
// the accepted ones fit in the balance and every refused one was larger
// than what was left when it came.
func TestInterleavedHoldsAreRefusedOnceTheBalanceIsUsed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	amounts := make([]SU, 40)
	var total SU
	for i := range amounts {
		amounts[i] = wholeSU(1 + rng.Int64N(20))
		total += amounts[i]
	}
	balance := total / 2
	for range 300 {
		b := NewSUBook()
		if _, err := b.Grant("g", "a", balance, 0, 0); err != nil {
			t.Fatal(err)
		}
		var accepted SU
		for _, i := range rng.Perm(len(amounts)) {
			left := b.Balance("a", 1).Available
			_, err := b.Hold(fmt.Sprint("job", i), "a", amounts[i], 1)
			switch {
			case err == nil:
				if amounts[i] > left {
					t.Fatalf("hold of %v accepted with only %v left", amounts[i], left)
				}
				accepted += amounts[i]
			case errors.Is(err, ErrInsufficientFunds):
				if amounts[i] <= left {
					t.Fatalf("hold of %v refused with %v left", amounts[i], left)
				}
			default:
				t.Fatal(err)
			}
		}
		if accepted > balance {
			t.Fatalf("accepted %v of holds against a balance of %v", accepted, balance)
		}
		if got := b.Balance("a", 1); got.Held != accepted || got.Available != balance-accepted {
			t.Fatalf("balance %+v after accepting %v", got, accepted)
		}
	}
}

func TestRacingDuplicateSubmissionsHoldOnce(t *testing.T) {
	l := &lockedBook{book: NewSUBook()}
	if _, err := l.book.Grant("g", "a", wholeSU(100), 0, 0); err != nil {
		t.Fatal(err)
	}
	results := make([][]JournalEntry, 32)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entries, err := l.hold("job-7", "a", wholeSU(60), Time(i))
			if err != nil {
				t.Error(err)
			}
			results[i] = entries
		}()
	}
	wg.Wait()
	for _, r := range results[1:] {
		if !reflect.DeepEqual(r, results[0]) {
			t.Fatalf("duplicate submissions got different entries: %+v vs %+v", r, results[0])
		}
	}
	if n := l.book.Len(); n != 2 {
		t.Fatalf("journal has %d entries, want the grant and one hold", n)
	}
	if got := l.book.Balance("a", 100); got.Held != wholeSU(60) {
		t.Fatalf("held %v after 32 duplicate submissions of 60 SU, want 60 SU", got.Held)
	}
}
