package cli

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSlurmTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30": 30 * time.Minute, "30:15": 30*time.Minute + 15*time.Second, "2:00:00": 2 * time.Hour,
		"1-12": 36 * time.Hour, "1-02:30": 26*time.Hour + 30*time.Minute, "2-00:00:30": 48*time.Hour + 30*time.Second,
	} {
		if got, err := slurmTime(in); err != nil || got != want {
			t.Errorf("--time %s = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "x", "1:2:3:4", "-5", "infinite"} {
		if _, err := slurmTime(in); err == nil {
			t.Errorf("--time %q was accepted", in)
		}
	}
}

func TestParseSlurmArray(t *testing.T) {
	for in, want := range map[string]struct {
		ids      string
		throttle int
	}{
		"0-3":        {"0 1 2 3", 0},
		"0-15:5":     {"0 5 10 15", 0},
		"1,3,5":      {"1 3 5", 0},
		"1-3,7,9-10": {"1 2 3 7 9 10", 0},
		"0-99%10":    {"", 10},
	} {
		a, err := parseSlurmArray(in)
		if err != nil {
			t.Errorf("--array %s: %v", in, err)
			continue
		}
		var ids []string
		for _, id := range a.ids {
			ids = append(ids, strconv.FormatInt(id, 10))
		}
		if want.ids != "" && strings.Join(ids, " ") != want.ids || a.throttle != want.throttle {
			t.Errorf("--array %s = %v %%%d; want %s %%%d", in, ids, a.throttle, want.ids, want.throttle)
		}
	}
	for _, in := range []string{"", "x", "5-1", "1:2", "0-4%0", "-1"} {
		if _, err := parseSlurmArray(in); err == nil {
			t.Errorf("--array %q was accepted", in)
		}
	}
}

// #SBATCH lines before the first command set the options, a command-line
// option overrides its directive, and a directive after a command is
// not read; an unknown one is refused with its line unless ignored.
func TestDirectives(t *testing.T) {
	script := []byte(`#!/bin/bash
# a comment
#SBATCH -A phys --job-name=sweep
#SBATCH -N2 --ntasks-per-node 4
#SBATCH -t 1-00:00 --mem=4G   # per node
#SBATCH --array=1-5%2 -o out-%A_%a.txt
echo hi
#SBATCH --exclusive
`)
	var o sbatchOptions
	fs := sbatchFlags(&o)
	fs.SetOutput(io.Discard)
	if err := readDirectives(script, fs, false); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"-t", "30", "--account", "bio"}); err != nil {
		t.Fatal(err)
	}
	if o.account != "bio" || o.name != "sweep" || o.nodes != 2 || o.perNode != 4 || o.time != "30" || o.mem != "4G" ||
		o.array != "1-5%2" || o.output != "out-%A_%a.txt" || o.exclusive {
		t.Fatalf("options read: %+v", o)
	}
	bad := []byte("#!/bin/sh\n#SBATCH -A phys\n#SBATCH --qos=high\ntrue\n")
	fs = sbatchFlags(&sbatchOptions{})
	fs.SetOutput(io.Discard)
	if err := readDirectives(bad, fs, false); err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "qos") {
		t.Fatalf("an unknown directive: %v; want a refusal naming line 3", err)
	}
	fs = sbatchFlags(&sbatchOptions{})
	fs.SetOutput(io.Discard)
	if err := readDirectives(bad, fs, true); err != nil {
		t.Fatalf("an unknown directive with --ignore-unknown: %v", err)
	}
}

// The job an sbatch script becomes: shape, resources and terms as sbatch
// means them, and refusals for what longfair does not do.
func TestSbatchSpec(t *testing.T) {
	t.Setenv("LONGFAIR_ACCOUNT", "")
	o := sbatchOptions{account: "phys", nodes: 2, ntasks: 8, cpusPerTask: 2, memPerCPU: "1G", time: "2:00:00",
		array: "0-9%3", noRequeue: true, export: "NONE", dependency: "afterok:4", gres: "gpu:1"}
	spec, err := sbatchSpec(&o, "/tmp/job.sh", []byte("#!/bin/sh\necho $SLURM_ARRAY_TASK_ID\n"), []string{"a b"})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Nodes != 2 || spec.Ranks != 8 || spec.Demand["cpu"] != 8 || spec.Demand["mem"] != 8<<30 || spec.Demand["gpu"] != 1 ||
		spec.Walltime != 2*time.Hour || spec.Tasks != 10 || spec.Throttle != 3 || spec.MaxAttempts != 1 || spec.Dependency != "afterok:4" || spec.Name != "job.sh" {
		t.Fatalf("spec %+v", spec)
	}
	if strings.Contains(spec.Command[0], "unset SLURM_ARRAY") {
		t.Errorf("a job array's script loses its SLURM_ARRAY_* names:\n%s", spec.Command[0])
	}
	if !strings.Contains(spec.Command[0], `"$script" 'a b'`) {
		t.Fatalf("the wrapper does not pass the script its arguments:\n%s", spec.Command[0])
	}
	// -n alone, in nearly every Slurm script: sbatch's minimum is one
	// node, which holds the processes.
	for _, o := range []sbatchOptions{
		{account: "phys", ntasks: 1, export: "ALL"},
		{account: "phys", ntasks: 3, cpusPerTask: 2, memPerCPU: "100M", export: "ALL"},
	} {
		spec, err := sbatchSpec(&o, "job.sh", nil, nil)
		if err != nil {
			t.Errorf("--ntasks %d alone: %v", o.ntasks, err)
			continue
		}
		cpus := float64(o.ntasks * max(o.cpusPerTask, 1))
		if spec.Nodes != 1 || spec.Ranks != o.ntasks || spec.Demand["cpu"] != cpus {
			t.Errorf("--ntasks %d -c %d alone: %d nodes, %d ranks, demand %v; want 1 node holding %v cores", o.ntasks, o.cpusPerTask, spec.Nodes, spec.Ranks, spec.Demand, cpus)
		}
		if want := 100 << 20 * cpus; o.memPerCPU != "" && spec.Demand["mem"] != want {
			t.Errorf("--mem-per-cpu 100M × %v cores: mem %v, want %v", cpus, spec.Demand["mem"], want)
		}
		// No --array: no SLURM_ARRAY_* (the worker sets them for every task).
		if !strings.Contains(spec.Command[0], "unset SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID\n") {
			t.Errorf("a job that is no array keeps the worker's SLURM_ARRAY_* names:\n%s", spec.Command[0])
		}
		// job_array.html: outside an array %a is 4294967294 (NO_VAL).
		if o.memPerCPU != "" {
			o.output = "%A_%a.out"
			spec, err := sbatchSpec(&o, "job.sh", nil, nil)
			if err != nil || !strings.Contains(spec.Command[0], `exec >"${SLURM_JOB_ID}_${SLURM_ARRAY_TASK_ID:-4294967294}.out"`) {
				t.Errorf("-o %%A_%%a.out outside an array: %v\n%s", err, spec.Command[0])
			}
		}
		// sbatch.html: SLURM_MEM_PER_CPU is --mem-per-cpu, in MB.
		if o.memPerCPU != "" && !strings.Contains(spec.Command[0], "SLURM_MEM_PER_CPU=100\n") {
			t.Errorf("--mem-per-cpu 100M: the script is not given SLURM_MEM_PER_CPU=100:\n%s", spec.Command[0])
		}
	}
	for _, o := range []sbatchOptions{
		{account: "phys", mailType: "END", export: "ALL"},
		{account: "phys", partition: "gpu", export: "ALL"},
		{export: "ALL"},
		{account: "phys", mem: "1G", memPerCPU: "1G", export: "ALL"},
		{account: "phys", gres: "fpga:1", export: "ALL"},
	} {
		if _, err := sbatchSpec(&o, "job.sh", nil, nil); err == nil {
			t.Errorf("options %+v were accepted", o)
		}
	}
}
