package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/longfair/longfair/core"
)

// neverExported are variables submit never captures: the job's
// environment is stored in the cluster's log and handed to workers, and
// a bearer token must not travel that way.
var neverExported = []string{"LONGFAIR_TOKEN"}

// submitDir is the working directory a job captures: --chdir made
// absolute against the current directory, or the current directory.
func submitDir(chdir string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the current directory for the job (give --chdir): %w", err)
	}
	if chdir == "" {
		return wd, nil
	}
	if !filepath.IsAbs(chdir) {
		chdir = filepath.Join(wd, chdir)
	}
	return filepath.Clean(chdir), nil
}

// exportEnv is the environment a job captures under --export, from
// environ (os.Environ()), in Slurm's sbatch terms: ALL, NONE, or a
// comma-separated list of NAME (its value here) and NAME=value, which
// starts from nothing unless its first item is ALL. dropped names the
// variables left out because their values are not text the cluster can
// carry (NUL, invalid UTF-8).
func exportEnv(spec string, environ []string) (env, dropped []string, err error) {
	items := strings.Split(spec, ",")
	all := strings.EqualFold(items[0], "ALL")
	if all {
		items = items[1:]
	} else if strings.EqualFold(spec, "NONE") {
		return []string{}, nil, nil
	}
	here := map[string]string{}
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name != "" {
			here[name] = value
		}
	}
	current := map[string]string{}
	var order []string
	set := func(name, value string) {
		if slices.Contains(neverExported, name) {
			return
		}
		if _, ok := current[name]; !ok {
			order = append(order, name)
		}
		current[name] = value
	}
	if all {
		for _, kv := range environ {
			name, value, ok := strings.Cut(kv, "=")
			if ok && name != "" {
				set(name, value)
			}
		}
	}
	for _, item := range items {
		name, value, hasValue := strings.Cut(item, "=")
		switch {
		case name == "":
			return nil, nil, Usagef("--export %q has an empty name: give ALL, NONE or NAME[=value],...", spec)
		case strings.EqualFold(item, "ALL") || strings.EqualFold(item, "NONE"):
			return nil, nil, Usagef("--export %q: ALL may only come first, and NONE only alone", spec)
		case hasValue:
			set(name, value)
		default:
			if v, ok := here[name]; ok {
				set(name, v)
			}
		}
	}
	env = make([]string, 0, len(order))
	for _, name := range order {
		v := current[name]
		if core.CheckCommandText(name, name+"="+v, 1<<20) != nil {
			dropped = append(dropped, name)
			continue
		}
		env = append(env, name+"="+v)
	}
	return env, dropped, nil
}
