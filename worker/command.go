package worker

import "strings"

// shellScript turns a job's command into the text /bin/sh -c runs. A
// one-element command is shell text as given ("make -j4 && ./run");
// a longer one is an argv, each element quoted so that the program gets
// exactly those arguments.
func shellScript(command []string) string {
	if len(command) == 1 {
		return command[0]
	}
	quoted := make([]string, len(command))
	for i, arg := range command {
		quoted[i] = shellQuote(arg)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes s for a POSIX shell: it is put in single quotes, and
// each single quote inside becomes quote, backslash, quote, quote. Plain
// words are left as they are for readable process listings.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
