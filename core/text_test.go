package core

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// Every character a terminal acts on is refused, in names, node ids, text
// and commands; newlines and tabs only in commands.
func TestTextRefusesWhatDrivesATerminal(t *testing.T) {
	bad := map[string]string{
		"NUL": "job\x00", "ESC": "a\x1b[2Jb", "newline": "a\nb", "CR": "a\rb", "tab": "a\tb",
		"DEL": "a\x7fb", "C1 CSI": "a\u009bb", "NEL": "a\u0085b", "RLO": "invoice\u202Etxt.exe",
		"LRI": "a\u2066b", "PDI": "a\u2069b", "LRM": "a\u200Eb", "ALM": "a\u061Cb",
		"line separator": "a\u2028b", "invalid UTF-8": "a\xffb", "truncated UTF-8": "caf\xc3",
	}
	for what, s := range bad {
		if err := CheckText("job name", s, 256); err == nil {
			t.Errorf("CheckText accepts %s: %q", what, s)
		} else if !strings.Contains(err.Error(), "job name") || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("CheckText(%s) says %q: want the field and the fix", what, err)
		}
		if err := CheckName("name", s); err == nil {
			t.Errorf("CheckName accepts %s", what)
		}
		if err := CheckNodeID("node", s); err == nil {
			t.Errorf("CheckNodeID accepts %s", what)
		}
		allowed := what == "newline" || what == "tab"
		if err := CheckCommandText("command", s, 1024); (err == nil) != allowed {
			t.Errorf("CheckCommandText(%s) = %v; want accepted %v", what, err, allowed)
		}
	}
	for _, good := range []string{"", "simulation 3", "Überlauf — café ☕", "日本語のジョブ", "a\\x1b is not ESC", "emoji 👩‍🔬"} {
		if err := CheckText("job name", good, 256); err != nil {
			t.Errorf("CheckText refuses %q: %v", good, err)
		}
	}
	if err := CheckCommandText("command", "for i in 1 2; do\n\techo $i\ndone", 1024); err != nil {
		t.Errorf("a shell script with newlines and tabs is refused: %v", err)
	}
	if err := CheckText("note", strings.Repeat("é", 600), 1024); err == nil || !strings.Contains(err.Error(), "1200 bytes") {
		t.Errorf("over-long text: %v", err)
	}
}

// Errors name the offending character, not the first byte of its UTF-8
// encoding, and count positions in characters.
func TestErrorsNameTheCharacter(t *testing.T) {
	cases := []struct {
		err  error
		want []string
	}{
		{CheckName("account name", "más"), []string{"'á' at character 2"}},
		{CheckName("account name", "€uro"), []string{"'€' at character 1"}},
		{CheckNodeID("node", "nœud-1"), []string{"'œ' at character 2"}},
		{CheckName("user name", "ab\xffc"), []string{"0xFF", "not UTF-8", "character 3"}},
		{CheckText("job name", "ñandú\x1b[31m", 256), []string{`'\x1b' at character 6`, "control character"}},
		{CheckText("note", "ok \u202Egnp.exe", 256), []string{`'\u202e' at character 4`, "laid out"}},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("accepted; want an error mentioning %q", c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(c.err.Error(), w) {
				t.Errorf("%q does not mention %q", c.err, w)
			}
		}
		if strings.Contains(c.err.Error(), "Ã") || strings.Contains(c.err.Error(), "â") {
			t.Errorf("%q names a byte of the encoding instead of the character", c.err)
		}
	}
}

// unsafeIn reports whether s holds a character the text rule is about,
// decoded independently of the validator (and of its ASCII fast path).
func unsafeIn(s string, script bool) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if script && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x61c || r == 0x200e || r == 0x200f ||
			r >= 0x2028 && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return true
		}
	}
	return false
}

// checkProperty is the property the fuzz and random tests check for one
// string: no validator accepts a string holding a control character, and
// Escape always yields text the rule accepts, unchanged when s was fine.
func checkProperty(t *testing.T, s string) {
	t.Helper()
	if unsafeIn(s, false) && CheckText("f", s, len(s)) == nil {
		t.Fatalf("CheckText accepts %q", s)
	}
	if unsafeIn(s, true) && CheckCommandText("f", s, len(s)) == nil {
		t.Fatalf("CheckCommandText accepts %q", s)
	}
	if CheckName("f", s) == nil && (unsafeIn(s, false) || strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })) {
		t.Fatalf("CheckName accepts %q", s)
	}
	e := Escape(s)
	if err := CheckText("f", e, len(e)); err != nil {
		t.Fatalf("Escape(%q) = %q, which the rule refuses: %v", s, e, err)
	}
	if !unsafeIn(s, false) && e != s {
		t.Fatalf("Escape changed acceptable text %q to %q", s, e)
	}
}

// A bounded random search over strings built from the characters that
// matter (every C0 and C1 control, the layout characters, broken UTF-8,
// plain and non-ASCII letters).
func TestNoValidatorAcceptsAControlCharacter(t *testing.T) {
	var alphabet []string
	for r := rune(0); r < 0x20; r++ {
		alphabet = append(alphabet, string(r))
	}
	for r := rune(0x7f); r <= 0xa0; r++ {
		alphabet = append(alphabet, string(r))
	}
	for _, r := range []rune{0x61c, 0x200b, 0x200d, 0x200e, 0x200f, 0x2027, 0x2028, 0x2029, 0x202a, 0x202e, 0x202f, 0x2065, 0x2066, 0x2069, 0x206a, 'a', 'Z', '7', '.', '-', '_', ':', ' ', 'á', '€', '𝄞'} {
		alphabet = append(alphabet, string(r))
	}
	alphabet = append(alphabet, "\xc3", "\xff", "\xe2\x80", "\xed\xa0\x80")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkProperty(t, b.String())
	}
}

func FuzzTextRule(f *testing.F) {
	for _, s := range []string{"", "a", "ok name", "a\x1bb", "\u202e", "caf\xc3", "a\nb\tc", "x\u0085"} {
		f.Add(s)
	}
	f.Fuzz(checkProperty)
}

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"café":             "café",
		"a\x1b[2Jb":        `a\x1b[2Jb`,
		"line\nbreak":      `line\nbreak`,
		"nul\x00":          `nul\x00`,
		"rlo\u202Etxt":     `rlo\u202etxt`,
		"bad\xffutf8":      `bad\xffutf8`,
		"c1\u009b":         `c1\u009b`,
		`back\slash stays`: `back\slash stays`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkCheckText(b *testing.B) {
	s := strings.Repeat("simulation run ", 16)
	for b.Loop() {
		if CheckText("job name", s, 256) != nil {
			b.Fatal("refused")
		}
	}
}

// The old rule (length and UTF-8 only), for comparison.
func BenchmarkValidUTF8(b *testing.B) {
	s := strings.Repeat("simulation run ", 16)
	for b.Loop() {
		if !utf8.ValidString(s) {
			b.Fatal("refused")
		}
	}
}
