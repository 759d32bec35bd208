// Package ledger holds longfair's two books: the fairness book (accumulated
// usage Ü and the integral of the non-sharing baseline per account, under a
// configurable window) and the SU book (double-entry service-unit accounting
// with a hash-chained journal).
//
// Resource quantities are Vectors. Each resource has a Unit (units.go):
// 0.01 core for cpu, 1 MiB for byte-counted resources, one for devices and
// anything else. Demands are whole numbers of units (Unit.RoundUp refuses
// less than one unit and rounds the rest up), node capacities are floored
// to whole units, and demands are taken from and given back to free vectors
// in whole units (AddUnits), so nodes fill exactly and never drift.
//
// A task's SU cost is Cost: runtime × its rate, where the rate is the
// largest of its resources' billing weights × demand (BillingMax, Slurm's
// MAX_TRES) or their sum (BillingSum). Weights that price one node's worth
// of each resource alike make the max rule charge a task the largest share
// of a node it takes. WorstCaseHold, the hold at submission, prices each
// task by the same Cost, and each charge records the rule in its
// ChargeDetail so the journal can be recomputed.
//
// Everything here is pure: no clock, no randomness, no I/O. Time is passed in
// as a Time argument, so two replicas that apply the same events hold the
// same state.
package ledger
