// Package ledger holds longfair's two books: the fairness book (accumulated
// usage Ü and the integral of the non-sharing baseline per account, under a
// configurable window) and the SU book (double-entry service-unit accounting
// with a hash-chained journal).
//
// Everything here is pure: no clock, no randomness, no I/O. Time is passed in
// as a Time argument, so two replicas that apply the same events hold the
// same state.
package ledger
