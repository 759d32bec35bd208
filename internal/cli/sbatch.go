package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const sbatchHelp = `Usage: longfair sbatch [flags] SCRIPT [ARGS...]

Submits a batch script the way Slurm's sbatch does: the #SBATCH lines at
the top of the script (up to the first line that is neither a comment nor
blank) give options, and options on the command line override them. The
directives are read with submit's own option table, so a directive means
exactly what the same option means on the command line; Slurm's names
--time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS), --job-name,
--array 0-N, --gres gpu:N and --gpus are understood too. An unknown
directive is refused with its line number unless --ignore-unknown.

The script runs by its absolute path on the node (it must be on a file
system the nodes share), under its #! interpreter or else /bin/sh, with
ARGS, in --chdir or the current directory. --parsable prints only the job
id. Output files (-o/-e) are not carried yet: 'longfair logs' has the
output.

Examples:
  longfair sbatch job.sh
  longfair sbatch --parsable -t 2:00:00 job.sh input.dat
`

// sbatchNames maps Slurm's option names to submit's.
var sbatchNames = map[string]string{"time": "walltime", "job-name": "name", "gpus": "gpu"}

// sbatchRefused are options sbatch has that longfair does not carry.
var sbatchRefused = map[string]string{
	"mail-type": "longfair sends no mail", "mail-user": "longfair sends no mail",
}

func sbatchCommand() func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		opts, script, scriptArgs, parsable, ignore, err := splitSbatchArgs(args)
		if err != nil {
			return err
		}
		if script == "" {
			if slicesContains(opts, "--help") || slicesContains(opts, "-h") {
				fmt.Fprint(stdout, sbatchHelp)
				return nil
			}
			return Usagef("missing SCRIPT: usage is 'longfair sbatch [flags] SCRIPT [ARGS...]'")
		}
		path, err := filepath.Abs(script)
		if err != nil {
			return fmt.Errorf("script %s: %w", script, err)
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("reading the script: %w", err)
		}
		directives, err := sbatchDirectives(text, ignore)
		if err != nil {
			return err
		}
		line, err := translateSbatch(opts, ignore)
		if err != nil {
			return err
		}
		all := append(append(directives, line...), "--")
		all = append(all, scriptInterpreter(text)...)
		all = append(all, path)
		all = append(all, scriptArgs...)
		if !parsable {
			return submitCommand()(all, stdout, stderr)
		}
		var buf bytes.Buffer
		if err := submitCommand()(append([]string{"--output=json"}, all...), &buf, stderr); err != nil {
			return err
		}
		var job struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(buf.Bytes(), &job); err != nil {
			return fmt.Errorf("reading the submitted job: %w", err)
		}
		fmt.Fprintln(stdout, job.ID)
		return nil
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// splitSbatchArgs separates sbatch's options from SCRIPT and its ARGS:
// options come before the script, as in sbatch.
func splitSbatchArgs(args []string) (opts []string, script string, rest []string, parsable, ignore bool, err error) {
	fs := submitFlagSet()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--parsable":
			parsable = true
			continue
		case a == "--ignore-unknown":
			ignore = true
			continue
		case a == "--":
			if i+1 < len(args) {
				return opts, args[i+1], args[i+2:], parsable, ignore, nil
			}
			return opts, "", nil, parsable, ignore, nil
		case !strings.HasPrefix(a, "-") || a == "-":
			return opts, a, args[i+1:], parsable, ignore, nil
		}
		opts = append(opts, a)
		if takesValue(fs, a) && i+1 < len(args) {
			i++
			opts = append(opts, args[i])
		}
	}
	return opts, "", nil, parsable, ignore, nil
}

// takesValue reports whether option a is followed by its value as the
// next argument.
func takesValue(fs *flag.FlagSet, a string) bool {
	var name string
	if long, ok := strings.CutPrefix(a, "--"); ok {
		if strings.Contains(long, "=") {
			return false
		}
		name = long
		if n, ok := sbatchNames[name]; ok {
			name = n
		}
	} else {
		if len(a) != 2 {
			return false // a glued value: -N2
		}
		name = a[1:]
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// sbatchDirectives reads the #SBATCH lines at the top of a script and
// checks each against submit's options, naming its line when wrong.
func sbatchDirectives(text []byte, ignore bool) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if n == 1 && strings.HasPrefix(line, "#!") {
			continue
		}
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "#") {
			break
		}
		d, ok := strings.CutPrefix(line, "#SBATCH")
		if !ok {
			continue
		}
		if i := strings.Index(d, " #"); i >= 0 {
			d = d[:i]
		}
		words, err := translateSbatch(strings.Fields(d), ignore)
		if err != nil {
			return nil, Usagef("line %d: %v", n, err)
		}
		if _, _, err := ParseGNU(submitFlagSet(), words); err != nil {
			return nil, Usagef("line %d: %v", n, err)
		}
		out = append(out, words...)
	}
	return out, sc.Err()
}

// translateSbatch rewrites Slurm's option names and value formats into
// submit's.
func translateSbatch(words []string, ignore bool) ([]string, error) {
	fs := submitFlagSet()
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, hasValue := "", "", false
		switch {
		case strings.HasPrefix(w, "--"):
			name, value, hasValue = strings.Cut(w[2:], "=")
		case strings.HasPrefix(w, "-") && len(w) >= 2:
			name = w[1:2]
			if len(w) > 2 {
				value, hasValue = w[2:], true
			}
			if f := fs.Lookup(name); f != nil {
				if short, ok := strings.CutPrefix(f.Usage, shortPrefix); ok {
					name = short
				}
			}
		default:
			out = append(out, w)
			continue
		}
		if why, ok := sbatchRefused[name]; ok {
			return nil, fmt.Errorf("--%s: %s", name, why)
		}
		if name == "output" || name == "error" {
			if ignore {
				if !hasValue {
					i++
				}
				continue
			}
			return nil, fmt.Errorf("%s: output files are not carried yet; the output is in 'longfair logs'", w)
		}
		if n, ok := sbatchNames[name]; ok {
			name = n
		}
		if name == "gres" || name == "requeue" || name == "no-requeue" {
			switch name {
			case "requeue":
				continue
			case "no-requeue":
				out = append(out, "--max-attempts=1")
				continue
			}
		}
		f := fs.Lookup(name)
		if f == nil && name != "gres" {
			if ignore {
				continue
			}
			return nil, fmt.Errorf("unknown option %s", w)
		}
		isBool := false
		if f != nil {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				isBool = true
			}
		}
		if !hasValue && !isBool {
			if i+1 >= len(words) {
				return nil, fmt.Errorf("%s needs a value", w)
			}
			i++
			value, hasValue = words[i], true
		}
		var err error
		switch name {
		case "walltime":
			value, err = slurmTime(value)
		case "array":
			value, err = slurmArray(value)
		case "gres":
			g, ok := strings.CutPrefix(value, "gpu:")
			if !ok {
				return nil, fmt.Errorf("--gres %q: only gpu:N is carried", value)
			}
			name, value = "gpu", g
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
		if hasValue {
			out = append(out, "--"+name+"="+value)
		} else {
			out = append(out, "--"+name)
		}
	}
	return out, nil
}

// slurmTime turns a Slurm time limit into a Go duration: minutes,
// MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; a Go duration such as 2h
// passes through.
func slurmTime(v string) (string, error) {
	if d, err := time.ParseDuration(v); err == nil {
		return d.String(), nil
	}
	bad := fmt.Errorf("%q is not a time: give a duration (2h) or minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", v)
	days := 0
	rest := v
	if d, r, ok := strings.Cut(v, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return "", bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return "", bad
		}
		nums[i] = n
	}
	var h, m, s int
	switch {
	case days > 0 || strings.Contains(v, "-"):
		switch len(nums) {
		case 1:
			h = nums[0]
		case 2:
			h, m = nums[0], nums[1]
		case 3:
			h, m, s = nums[0], nums[1], nums[2]
		default:
			return "", bad
		}
	default:
		switch len(nums) {
		case 1:
			m = nums[0]
		case 2:
			m, s = nums[0], nums[1]
		case 3:
			h, m, s = nums[0], nums[1], nums[2]
		default:
			return "", bad
		}
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
	return d.String(), nil
}

// slurmArray turns --array into submit's task count. longfair's tasks are
// 0..N-1, so only 0-N (or a plain count) is carried for now.
func slurmArray(v string) (string, error) {
	if v == "0" {
		return "1", nil
	}
	lo, hi, ok := strings.Cut(v, "-")
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if !ok || errA != nil || errB != nil || a != 0 || b < 0 {
		return "", fmt.Errorf("--array %q: only 0-N ranges are carried yet (tasks are 0..N-1)", v)
	}
	return strconv.Itoa(b + 1), nil
}

// scriptInterpreter is what runs the script: its #! line's interpreter
// (and its one argument), else /bin/sh, as the kernel would but without
// needing the script to be executable.
func scriptInterpreter(text []byte) []string {
	first, _, _ := bytes.Cut(text, []byte("\n"))
	if line, ok := bytes.CutPrefix(first, []byte("#!")); ok {
		if f := strings.Fields(string(line)); len(f) > 0 {
			if len(f) > 2 {
				f = []string{f[0], strings.Join(f[1:], " ")}
			}
			return f
		}
	}
	return []string{"/bin/sh"}
}

// slurmDuration is submit's --walltime: a Go duration or a Slurm time.
type slurmDuration time.Duration

func (d *slurmDuration) String() string { return time.Duration(*d).String() }

func (d *slurmDuration) Set(v string) error {
	s, err := slurmTime(v)
	if err != nil {
		return err
	}
	p, err := time.ParseDuration(s)
	*d = slurmDuration(p)
	return err
}
