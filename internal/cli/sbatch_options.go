package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// sbatchOptions are the options of `longfair sbatch`, as sbatch spells
// them. One pflag set (sbatchFlags) reads both the script's #SBATCH
// directives and the command line, so the two cannot disagree; options
// on the command line are read last and override the directives.
type sbatchOptions struct {
	account, name, mem, memPerCPU, time, array, output, errorPath string
	chdir, export, dependency, gres, gpus, begin, partition       string
	mailType, mailUser                                            string
	nodes, ntasks, perNode, cpusPerTask, nice                     int
	exclusive, requeue, noRequeue, hold, parsable, ignoreUnknown  bool
}

// sbatchFlags defines the options on a new set.
func sbatchFlags(o *sbatchOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sbatch", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.StringVarP(&o.account, "account", "A", "", "account charged (default $LONGFAIR_ACCOUNT)")
	fs.StringVarP(&o.name, "job-name", "J", "", "job name (default: the script's file name)")
	fs.IntVarP(&o.nodes, "nodes", "N", 0, "nodes each task spans")
	fs.IntVarP(&o.ntasks, "ntasks", "n", 0, "processes across the nodes")
	fs.IntVar(&o.perNode, "ntasks-per-node", 0, "processes per node")
	fs.IntVarP(&o.cpusPerTask, "cpus-per-task", "c", 0, "cores per process")
	fs.StringVar(&o.mem, "mem", "", "memory per node: MB, or with a K, M, G or T suffix")
	fs.StringVar(&o.memPerCPU, "mem-per-cpu", "", "memory per core: MB, or with a K, M, G or T suffix")
	fs.StringVarP(&o.time, "time", "t", "", "walltime: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS")
	fs.StringVarP(&o.array, "array", "a", "", "array indexes: 0-15, 0-15:4, 1,3,5, with %N to run at most N at once")
	fs.StringVarP(&o.output, "output", "o", "", "stdout file: %j job, %A array job, %a array index, %x name, %u user, %N node, %% a %")
	fs.StringVarP(&o.errorPath, "error", "e", "", "stderr file, with the same patterns (default: with stdout)")
	fs.StringVarP(&o.chdir, "chdir", "D", "", "directory the script runs in (default: where sbatch ran)")
	fs.StringVar(&o.export, "export", "ALL", "environment: ALL, NONE, or NAME[=value],...")
	fs.StringVarP(&o.dependency, "dependency", "d", "", "afterok:ID[:ID...], afternotok, afterany, after, singleton; ',' all, '?' any")
	fs.StringVar(&o.gres, "gres", "", "generic resources per node: gpu:N")
	fs.StringVarP(&o.gpus, "gpus", "G", "", "GPUs per node (longfair places GPUs per node)")
	fs.BoolVar(&o.exclusive, "exclusive", false, "take whole nodes")
	fs.BoolVar(&o.requeue, "requeue", false, "rerun a task lost with its node (the default)")
	fs.BoolVar(&o.noRequeue, "no-requeue", false, "never rerun a task lost with its node")
	fs.BoolVarP(&o.hold, "hold", "H", false, "submit held: nothing starts until 'longfair release'")
	fs.StringVarP(&o.begin, "begin", "b", "", "start no task before: now+1hour, 16:00, 2026-12-01T08:30")
	fs.IntVar(&o.nice, "nice", 0, "order among your account's jobs (higher goes later)")
	fs.StringVarP(&o.partition, "partition", "p", "", "refused: longfair has no partitions (accounts and node classes do that)")
	fs.StringVar(&o.mailType, "mail-type", "", "refused: longfair sends no mail")
	fs.StringVar(&o.mailUser, "mail-user", "", "refused: longfair sends no mail")
	fs.BoolVar(&o.parsable, "parsable", false, "print only the job id")
	fs.BoolVar(&o.ignoreUnknown, "ignore-unknown", false, "skip #SBATCH directives longfair does not know, instead of refusing the script")
	return fs
}

// slurmTime reads Slurm's time formats: minutes, minutes:seconds,
// hours:minutes:seconds, days-hours, days-hours:minutes and
// days-hours:minutes:seconds; "infinite" and "unlimited" are refused
// (a task needs a walltime for its hold).
func slurmTime(s string) (time.Duration, error) {
	bad := fmt.Errorf("--time %q is not a Slurm time: give MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", s)
	days := 0
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, bad
		}
		days, rest = n, r
	}
	var parts []int
	for _, p := range strings.Split(rest, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		parts = append(parts, n)
	}
	// Which unit each field is: with days, hours first; without, a lone
	// field is minutes, two are minutes and seconds.
	units := map[int][]time.Duration{1: {time.Minute}, 2: {time.Minute, time.Second}, 3: {time.Hour, time.Minute, time.Second}}[len(parts)]
	if strings.Contains(s, "-") {
		units = []time.Duration{time.Hour, time.Minute, time.Second}[:min(len(parts), 3)]
	}
	if units == nil || len(parts) > 3 {
		return 0, bad
	}
	d := time.Duration(days) * 24 * time.Hour
	for i, u := range units {
		d += time.Duration(parts[i]) * u
	}
	if d <= 0 {
		return 0, bad
	}
	return d, nil
}

// slurmMem reads a Slurm memory size: megabytes by default, or with a
// K, M, G or T suffix; bytes returned.
func slurmMem(flag, s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	unit := 1 << 20
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		unit, s = 1<<10, s[:len(s)-1]
	case "M":
		s = s[:len(s)-1]
	case "G":
		unit, s = 1<<30, s[:len(s)-1]
	case "T":
		unit, s = 1<<40, s[:len(s)-1]
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--%s %q is not a memory size: give MB, or a number with K, M, G or T", flag, s)
	}
	return n * float64(unit), nil
}

// slurmArray is an --array: the index each task of the longfair array
// stands for, in order, and the %N throttle (0: none).
type slurmArray struct {
	ids      []int64
	throttle int
}

// maxSbatchArray bounds the indexes an --array lists: one task each,
// and a job has at most this many tasks.
const maxSbatchArray = longfairv1.MaxTasksPerJob

// parseSlurmArray reads 0-15, 0-15:4, 1,3,5 and mixes of them, with an
// optional %N.
func parseSlurmArray(s string) (slurmArray, error) {
	var a slurmArray
	bad := fmt.Errorf("--array %q is not an array: give 0-15, 0-15:4, 1,3,5 or such, with %%N to run at most N at once", s)
	spec, throttle, ok := strings.Cut(s, "%")
	if ok {
		n, err := strconv.Atoi(throttle)
		if err != nil || n < 1 {
			return a, bad
		}
		a.throttle = n
	}
	seen := map[int64]bool{}
	for _, part := range strings.Split(spec, ",") {
		rng, stepText, hasStep := strings.Cut(part, ":")
		lo, hi, isRange := strings.Cut(rng, "-")
		first, err := strconv.ParseInt(lo, 10, 64)
		if err != nil || first < 0 {
			return a, bad
		}
		last, step := first, int64(1)
		if isRange {
			if last, err = strconv.ParseInt(hi, 10, 64); err != nil || last < first {
				return a, bad
			}
		}
		if hasStep {
			if step, err = strconv.ParseInt(stepText, 10, 64); err != nil || step < 1 || !isRange {
				return a, bad
			}
		}
		for i := first; i <= last; i += step {
			if len(a.ids) >= maxSbatchArray {
				return a, fmt.Errorf("--array %q lists more than %d indexes", s, maxSbatchArray)
			}
			if !seen[i] {
				seen[i] = true
				a.ids = append(a.ids, i)
			}
		}
	}
	if len(a.ids) == 0 {
		return a, bad
	}
	return a, nil
}

// slurmDuration is a walltime flag that takes a Go duration (30m, 2h) or
// any of Slurm's time formats (slurmTime).
type slurmDuration time.Duration

func (d *slurmDuration) String() string { return time.Duration(*d).String() }

func (d *slurmDuration) Set(s string) error {
	if v, err := time.ParseDuration(s); err == nil {
		*d = slurmDuration(v)
		return nil
	}
	v, err := slurmTime(s)
	if err != nil {
		return err
	}
	*d = slurmDuration(v)
	return nil
}
