package cli

import (
	"flag"
	"strconv"
	"strings"
	"time"

	"github.com/longfair/longfair/client"
)

// submitScheduling are submit's options on when the job may start, as
// sbatch names them. The server refuses each until it implements it; the
// CLI only carries them.
type submitScheduling struct {
	hold, exclusive bool
	dependency      string
	begin           string
	nice            int
}

func (s *submitScheduling) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.hold, "hold", false, "submit the job held: it starts only once released")
	aliasFlag(fs, "H", "hold")
	fs.StringVar(&s.dependency, "dependency", "", "start only after other jobs, as in Slurm: `list` such as afterok:12:13")
	aliasFlag(fs, "d", "dependency")
	fs.StringVar(&s.begin, "begin", "", "earliest `time` the job may start: RFC 3339 (2026-01-02T15:04:05Z), YYYY-MM-DDTHH:MM[:SS] local, or now+DURATION")
	fs.IntVar(&s.nice, "nice", 0, "lower the job's priority by `N`")
	fs.BoolVar(&s.exclusive, "exclusive", false, "run each task on whole nodes that share nothing with other jobs")
}

// aliasFlag makes the one-letter option short the short form of long
// (GNUFlags reads the "short for --" help).
func aliasFlag(fs *flag.FlagSet, short, long string) {
	fs.Var(fs.Lookup(long).Value, short, shortPrefix+long)
}

// apply sets the options on spec; now resolves --begin now+….
func (s *submitScheduling) apply(spec *client.JobSpec, now time.Time) error {
	spec.Hold, spec.Dependency, spec.Exclusive = s.hold, s.dependency, s.exclusive
	if s.nice < -10000 || s.nice > 10000 {
		return Usagef("--nice %d: give -10000 to 10000", s.nice)
	}
	spec.Nice = int32(s.nice)
	if s.begin != "" {
		t, err := parseBegin(s.begin, now)
		if err != nil {
			return Usagef("--begin %q: %v", s.begin, err)
		}
		spec.Begin = t
	}
	return nil
}

// parseBegin reads a start time: now, now+N[unit] (units s, m, h, d,
// seconds … days, as sbatch), RFC 3339, or local YYYY-MM-DDTHH:MM[:SS].
func parseBegin(v string, now time.Time) (time.Time, error) {
	if v == "now" {
		return now, nil
	}
	if rest, ok := strings.CutPrefix(v, "now+"); ok {
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		num, unit := rest, "s"
		if i >= 0 {
			num, unit = rest[:i], rest[i:]
		}
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return time.Time{}, errBegin
		}
		var d time.Duration
		switch strings.ToLower(unit) {
		case "s", "sec", "secs", "second", "seconds":
			d = time.Second
		case "m", "min", "mins", "minute", "minutes":
			d = time.Minute
		case "h", "hour", "hours":
			d = time.Hour
		case "d", "day", "days":
			d = 24 * time.Hour
		default:
			return time.Time{}, errBegin
		}
		return now.Add(time.Duration(n) * d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, v, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errBegin
}

var errBegin = beginError{}

type beginError struct{}

func (beginError) Error() string {
	return "not a time: give now+1hour, 2026-01-02T15:04[:05] or an RFC 3339 time"
}
