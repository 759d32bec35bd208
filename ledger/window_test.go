package ledger

import (
	"strings"
	"testing"
	"time"
)

func TestParseWindowValidForms(t *testing.T) {
	cases := []struct {
		in   string
		want Window
	}{
		{"none", Window{Kind: WindowNone}},
		{" None ", Window{Kind: WindowNone}},
		{"tumbling:24h", Window{WindowTumbling, 24 * time.Hour}},
		{"sliding:90m", Window{WindowSliding, 90 * time.Minute}},
		{"decay:7d", Window{WindowDecay, 7 * 24 * time.Hour}},
		{"decay:2w", Window{WindowDecay, 14 * 24 * time.Hour}},
		{"tumbling:1w3d12h", Window{WindowTumbling, (7+3)*24*time.Hour + 12*time.Hour}},
		{"sliding:1.5d", Window{WindowSliding, 36 * time.Hour}},
		{"sliding:1h30m15.5s", Window{WindowSliding, time.Hour + 30*time.Minute + 15500*time.Millisecond}},
		{"Decay: 12h", Window{WindowDecay, 12 * time.Hour}},
		{"tumbling:250ms", Window{WindowTumbling, 250 * time.Millisecond}},
	}
	for _, c := range cases {
		got, err := ParseWindow(c.in)
		if err != nil {
			t.Errorf("ParseWindow(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("ParseWindow(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestWindowStringRoundTrips(t *testing.T) {
	windows := []Window{
		{Kind: WindowNone},
		{WindowTumbling, 24 * time.Hour},
		{WindowTumbling, 7 * 24 * time.Hour},
		{WindowSliding, 90 * time.Minute},
		{WindowSliding, 36 * time.Hour},
		{WindowDecay, 3 * 24 * time.Hour},
		{WindowDecay, 1},
		{WindowDecay, 1<<63 - 1},
		{WindowSliding, time.Hour + 1},
	}
	for _, w := range windows {
		s := w.String()
		back, err := ParseWindow(s)
		if err != nil {
			t.Errorf("ParseWindow(%q) of %+v: %v", s, w, err)
			continue
		}
		if back != w {
			t.Errorf("%+v → %q → %+v", w, s, back)
		}
	}
	if got := (Window{WindowDecay, 14 * 24 * time.Hour}).String(); got != "decay:2w" {
		t.Errorf("two weeks print as %q, want decay:2w", got)
	}
	if got := (Window{WindowTumbling, 3 * 24 * time.Hour}).String(); got != "tumbling:3d" {
		t.Errorf("three days print as %q, want tumbling:3d", got)
	}
}

func TestParseWindowRefusals(t *testing.T) {
	cases := []struct {
		in      string
		wantAll []string // substrings the message must contain
	}{
		{"tumbling:0s", []string{"window length must be positive", "tumbling:24h"}},
		{"sliding:0", []string{"window length must be positive", "sliding:24h"}},
		{"decay:0d", []string{"window length must be positive"}},
		{"tumbling:-1h", []string{"window length must be positive"}},
		{"sliding:-3d", []string{"window length must be positive"}},
		{"tumbling", []string{"missing", "window length must be positive", "tumbling:24h"}},
		{"decay:", []string{"missing", "window length must be positive"}},
		{"weekly:24h", []string{`unknown kind "weekly"`, "none", "tumbling", "sliding", "decay"}},
		{"", []string{"unknown kind", "tumbling:<length>"}},
		{"none:24h", []string{"takes no length"}},
		{"tumbling:24x", []string{"cannot read length", "7d"}},
		{"tumbling:h", []string{"cannot read length"}},
		{"tumbling:5", []string{"has no unit"}},
		{"decay:99999999w", []string{"too long"}},
	}
	for _, c := range cases {
		_, err := ParseWindow(c.in)
		if err == nil {
			t.Errorf("ParseWindow(%q) accepted it", c.in)
			continue
		}
		for _, want := range c.wantAll {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("ParseWindow(%q) error %q does not say %q", c.in, err, want)
			}
		}
	}
}

func TestWindowValidateAndDefaultTimeout(t *testing.T) {
	if err := (Window{WindowSliding, 0}).Validate(); err == nil {
		t.Error("a zero-length sliding window validated")
	}
	if err := (Window{"monthly", time.Hour}).Validate(); err == nil {
		t.Error("an unknown kind validated")
	}
	if err := (Window{}).Validate(); err != nil {
		t.Errorf("the zero Window (none) did not validate: %v", err)
	}
	for _, w := range []Window{{WindowTumbling, time.Hour}, {WindowSliding, 2 * time.Hour}, {WindowDecay, 3 * time.Hour}} {
		if got := w.DefaultTimeout(); got != w.Length {
			t.Errorf("%v: default timeout %v, want the length %v", w, got, w.Length)
		}
	}
	if got := (Window{Kind: WindowNone}).DefaultTimeout(); got != 0 {
		t.Errorf("none: default timeout %v, want 0 (disabled)", got)
	}
}
