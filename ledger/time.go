package ledger

import "time"

// Time is a point in time in nanoseconds. The live system uses Unix time; the
// simulator uses a virtual clock that starts at zero. The ledger never reads
// the clock itself: every Time comes in as an argument.
type Time int64

// Seconds converts a span between two Times to seconds, the unit of
// accumulated usage (resource-seconds).
func Seconds(d time.Duration) float64 { return d.Seconds() }

// Add returns t advanced by d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t−u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }
