package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestSlurmTime(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "30", want: "30m0s"},
		{in: "5:30", want: "5m30s"},
		{in: "2:05:30", want: "2h5m30s"},
		{in: "1-2", want: "26h0m0s"},
		{in: "1-2:30", want: "26h30m0s"},
		{in: "1-2:30:15", want: "26h30m15s"},
		{in: "90m", want: "1h30m0s"},
		{in: "1:2:3:4", err: "D-HH:MM:SS"},
		{in: "x", err: "minutes"},
	} {
		got, err := slurmTime(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %q, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestSlurmArray(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"0-15", "16"}, {"0", "1"}, {"1-3", ""}, {"1,3,5", ""}, {"0-15:4", ""}} {
		got, err := slurmArray(tc.in)
		if (err != nil) != (tc.want == "") || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestSbatchDirectives(t *testing.T) {
	script := `#!/bin/bash
# a comment
#SBATCH -A astro
#SBATCH --job-name=sim -N 2
#SBATCH -t 1-00:30 --cpus-per-task=4 -n 8

#SBATCH --array=0-3 --gres=gpu:2 --no-requeue --hold
echo hi
#SBATCH --account=ignored-after-the-first-command
`
	got, err := sbatchDirectives([]byte(script), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--account=astro", "--name=sim", "--nodes=2", "--walltime=24h30m0s", "--cpus-per-task=4", "--ntasks=8",
		"--array=4", "--gpu=2", "--max-attempts=1", "--hold"}
	if !slices.Equal(got, want) {
		t.Errorf("directives %q\nwant %q", got, want)
	}
	for _, tc := range []struct{ script, err string }{
		{"#!/bin/sh\n#SBATCH -A a\n#SBATCH --frobnicate\n", "line 3: unknown option --frobnicate"},
		{"#SBATCH --mail-type=END\n", "line 1: --mail-type: longfair sends no mail"},
		{"\n#SBATCH -t soon\n", "line 2: -t: \"soon\" is not a time"},
		{"#SBATCH --nodes=two\n", "line 1:"},
		{"#SBATCH -o out-%j.txt\n", "line 1: -o: output files are not carried yet"},
	} {
		_, err := sbatchDirectives([]byte(tc.script), false)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%q: %v, want %q", tc.script, err, tc.err)
		}
	}
	got, err = sbatchDirectives([]byte("#SBATCH --frobnicate -o x.out -A a\n"), true)
	if err != nil || !slices.Equal(got, []string{"--account=a"}) {
		t.Errorf("--ignore-unknown: %q, %v", got, err)
	}
}

// TestSbatchCommandLineOverrides checks that options before SCRIPT are
// split from the script's own arguments and come after the directives.
func TestSbatchCommandLineOverrides(t *testing.T) {
	opts, script, rest, parsable, _, err := splitSbatchArgs([]string{"--parsable", "-t", "10", "-A", "bio", "job.sh", "-A", "x"})
	if err != nil || script != "job.sh" || !parsable || !slices.Equal(rest, []string{"-A", "x"}) {
		t.Fatalf("split: %q %q %q %v %v", opts, script, rest, parsable, err)
	}
	line, err := translateSbatch(opts, false)
	if err != nil || !slices.Equal(line, []string{"--walltime=10m0s", "--account=bio"}) {
		t.Fatalf("translate: %q %v", line, err)
	}
	fs := submitFlagSet()
	if _, _, err := ParseGNU(fs, append([]string{"--account=astro", "--walltime=1h"}, line...)); err != nil {
		t.Fatal(err)
	}
	if a, w := fs.Lookup("account").Value.String(), fs.Lookup("walltime").Value.String(); a != "bio" || w != "10m0s" {
		t.Errorf("after override: account %s walltime %s", a, w)
	}
}
