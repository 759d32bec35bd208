package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseBegin reads a --begin time the way Slurm's sbatch does: now,
// now+N with a unit (seconds, the default, minutes, hours, days, weeks) or
// a Go duration (now+90m), HH:MM[:SS] (today, or tomorrow once that has
// passed), midnight, noon, YYYY-MM-DD, and YYYY-MM-DDTHH:MM[:SS], in the
// local time zone.
func parseBegin(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("--begin %q is not a time: give now+1hour, now+90m, 16:00, 2026-12-01 or 2026-12-01T08:30", s)
	switch strings.ToLower(s) {
	case "":
		return time.Time{}, nil
	case "now":
		return now, nil
	case "midnight":
		return nextClock(now, 0, 0, 0), nil
	case "noon":
		return nextClock(now, 12, 0, 0), nil
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "now+"); ok {
		d, err := slurmOffset(rest)
		if err != nil {
			return time.Time{}, bad
		}
		return now.Add(d), nil
	}
	if t, ok := slurmDate(s, now.Location()); ok {
		return t, nil
	}
	if t, ok := slurmClockTime(s, now.Location()); ok {
		return nextClock(now, t.Hour(), t.Minute(), t.Second()), nil
	}
	return time.Time{}, bad
}

// slurmDate reads the dated forms every Slurm time option takes
// (sbatch --begin, sacct --starttime): YYYY-MM-DD[THH:MM[:SS]] in loc.
func slurmDate(s string, loc *time.Location) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// slurmClockTime reads HH:MM[:SS]; which day it falls on is the caller's
// choice (--begin looks ahead, --starttime back).
func slurmClockTime(s string, loc *time.Location) (time.Time, bool) {
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// slurmOffset reads the N[unit] of now+N[unit], or a Go duration.
func slurmOffset(s string) (time.Duration, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil || n < 0 {
		return time.ParseDuration(s)
	}
	units := map[string]time.Duration{"": time.Second, "s": time.Second, "second": time.Second, "seconds": time.Second,
		"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour,
		"day": 24 * time.Hour, "days": 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour}
	unit, ok := units[s[i:]]
	if !ok {
		return time.ParseDuration(s)
	}
	return time.Duration(n) * unit, nil
}

// nextClock is the next time, from now on, the clock shows h:m:s.
func nextClock(now time.Time, h, m, s int) time.Time {
	t := time.Date(now.Year(), now.Month(), now.Day(), h, m, s, 0, now.Location())
	if t.Before(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t
}
