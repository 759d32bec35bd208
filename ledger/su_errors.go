package ledger

import (
	"errors"
	"fmt"
)

// Errors of the SU book. Every error a book operation returns wraps exactly
// one of them, so the FSM can map it to a kind of refusal with errors.Is
// (and the server that kind to the gRPC code named below); the message
// says what was wrong and what to do. An operation that returns an
// error has changed nothing.
var (
	// ErrInsufficientFunds: the account's available SU cannot cover a hold
	// (gRPC ResourceExhausted). The error is an *InsufficientFundsError
	// carrying the numbers.
	ErrInsufficientFunds = errors.New("insufficient SU")
	// ErrIDConflict: the id was already used for a different operation
	// (gRPC AlreadyExists).
	ErrIDConflict = errors.New("id already used for a different operation")
	// ErrUnknownHold: a charge or release names a hold the book does not
	// have (gRPC NotFound).
	ErrUnknownHold = errors.New("unknown hold")
	// ErrHoldClosed: a new charge names a hold that was already released
	// (gRPC FailedPrecondition).
	ErrHoldClosed = errors.New("hold already released")
	// ErrBadSUArgument: an id, account, amount, expiry or charge detail is
	// malformed (gRPC InvalidArgument).
	ErrBadSUArgument = errors.New("invalid SU book request")
)

// InsufficientFundsError is the refusal of a hold the account cannot cover.
type InsufficientFundsError struct {
	// HoldID is the refused hold.
	HoldID string
	// Cost is the amount the hold asked for.
	Cost SU
	// Balance is the account's balance when the hold was refused.
	Balance Balance
}

func (e *InsufficientFundsError) Error() string {
	b := e.Balance
	return fmt.Sprintf("%v: account %q cannot cover hold %q of %v SU: available %v SU "+
		"(granted %v, charged %v, held by open jobs %v, expired %v); "+
		"ask an admin for a grant or submit fewer tasks",
		ErrInsufficientFunds, b.Account, e.HoldID, e.Cost, b.Available,
		b.Granted, b.Charged, b.Held, b.Expired)
}

// Unwrap makes errors.Is(err, ErrInsufficientFunds) hold.
func (e *InsufficientFundsError) Unwrap() error { return ErrInsufficientFunds }

func badSUArgument(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadSUArgument, fmt.Sprintf(format, args...))
}
