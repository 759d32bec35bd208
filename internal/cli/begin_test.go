package cli

import (
	"testing"
	"time"
)

func TestParseBegin(t *testing.T) {
	now := time.Date(2026, 11, 25, 14, 30, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"now":              now,
		"now+1hour":        now.Add(time.Hour),
		"now+90":           now.Add(90 * time.Second),
		"now+90m":          now.Add(90 * time.Minute),
		"now+2days":        now.Add(48 * time.Hour),
		"16:00":            time.Date(2026, 11, 25, 16, 0, 0, 0, time.UTC),
		"08:15":            time.Date(2026, 11, 26, 8, 15, 0, 0, time.UTC), // passed today: tomorrow
		"midnight":         time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC),
		"2026-12-01":       time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-01T08:30": time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC),
	} {
		got, err := parseBegin(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("--begin %q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"tomorrowish", "now+x", "25:00", "2026-13-01"} {
		if _, err := parseBegin(in, now); err == nil {
			t.Errorf("--begin %q was accepted", in)
		}
	}
}
