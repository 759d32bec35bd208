package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/spf13/pflag"
)

// The commands declare their options on a Go flag.FlagSet (one table per
// command, shared with the code that reads them), and GNUFlags parses them
// the POSIX/GNU way with pflag: "--nodes 2", "--nodes=2", "-N 2", "-N2" and
// grouped short booleans. A one-letter option whose help is "short for
// --NAME" becomes NAME's short form rather than an option of its own.

// shortPrefix marks a one-letter alias of a long option.
const shortPrefix = "short for --"

// goFlagValue hands a value pflag parsed to the Go flag set, so that
// flag.FlagSet.Visit still reports which options were given.
type goFlagValue struct {
	fs   *flag.FlagSet
	name string
	v    flag.Value
}

func (g goFlagValue) String() string     { return g.v.String() }
func (g goFlagValue) Set(s string) error { return g.fs.Set(g.name, s) }

func (g goFlagValue) Type() string {
	if b, ok := g.v.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "bool"
	}
	t := reflect.TypeOf(g.v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(t.Name(), "Value"), "Flag"))
}

// GNUFlags returns the pflag form of fs's options.
func GNUFlags(fs *flag.FlagSet) *pflag.FlagSet {
	pfs := pflag.NewFlagSet(fs.Name(), pflag.ContinueOnError)
	pfs.SetOutput(io.Discard)
	pfs.Usage = func() {}
	pfs.SortFlags = false
	short := map[string]string{} // long name → one letter
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 && strings.HasPrefix(f.Usage, shortPrefix) {
			long := strings.TrimSuffix(strings.TrimPrefix(f.Usage, shortPrefix), ")")
			if fs.Lookup(long) != nil {
				short[long] = f.Name
			}
		}
	})
	fs.VisitAll(func(f *flag.Flag) {
		if s, ok := short[strings.TrimSuffix(strings.TrimPrefix(f.Usage, shortPrefix), ")")]; ok && s == f.Name && len(f.Name) == 1 {
			return
		}
		pf := &pflag.Flag{
			Name:     f.Name,
			Usage:    f.Usage,
			Value:    goFlagValue{fs: fs, name: f.Name, v: f.Value},
			DefValue: f.DefValue,
		}
		if len(f.Name) == 1 {
			pf.Shorthand = f.Name
		} else {
			pf.Shorthand = short[f.Name]
		}
		if pf.Value.Type() == "bool" {
			pf.NoOptDefVal = "true"
		}
		pfs.AddFlag(pf)
	})
	return pfs
}

// optionsRequest is the one argument completion (root.go) runs a command
// with to get the option table it parses with, instead of running it: the
// commands build their tables inside their Run, so asking the parser is
// the one way to read the very table that parses, with no second list of
// flags. No argument a shell passes can hold a NUL byte, so no user can
// send it by mistake.
const optionsRequest = "\x00options"

// optionTable is the error a command's option parsing returns on
// optionsRequest: the table it would have parsed args with. Commands pass
// their parse error up, so it reaches completion as any error would.
type optionTable struct{ flags *pflag.FlagSet }

func (optionTable) Error() string {
	return "the option table was asked for (shell completion), so nothing ran"
}

// answerOptionsRequest returns the optionTable of pfs when args is
// optionsRequest, and nil for a command line to parse.
func answerOptionsRequest(args []string, pfs *pflag.FlagSet) error {
	if len(args) == 1 && args[0] == optionsRequest {
		return optionTable{flags: pfs}
	}
	return nil
}

// ParseGNU parses args with fs's options in GNU style, allowing options
// before and after the positional arguments. Everything after a "--" is
// returned as rest, unparsed (a command line to run; nil without "--").
// It returns flag.ErrHelp on -h or --help, and an optionTable on
// optionsRequest.
func ParseGNU(fs *flag.FlagSet, args []string) (positional, rest []string, err error) {
	pfs := GNUFlags(fs)
	if err := answerOptionsRequest(args, pfs); err != nil {
		return nil, nil, err
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		// Go's flag package took "-cpu 2"; pflag reads it as -c -p -u.
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "="); len(a) > 2 && a[1] != '-' && a[0] == '-' && len(name) > 1 && fs.Lookup(name) != nil {
			return nil, nil, fmt.Errorf("%s: long options take two dashes: --%s", a, strings.TrimPrefix(a, "-"))
		}
	}
	if err := pfs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, nil, flag.ErrHelp
		}
		return nil, nil, err
	}
	all := pfs.Args()
	if at := pfs.ArgsLenAtDash(); at >= 0 {
		return all[:at], append([]string{}, all[at:]...), nil
	}
	return all, nil, nil
}

// PrintFlags writes fs's options as GNU-style help lines.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, GNUFlags(fs).FlagUsages())
}
