package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/longfair/longfair/client"
)

const sbatchHelp = `Usage: longfair sbatch [options] SCRIPT [ARGS...]

Submits a batch script as Slurm's sbatch does: the options come from the
script's #SBATCH lines (those before its first command) and from the
command line, which overrides them. The script is stored with the job and
runs on the job's (first) node with ARGS, under its #! interpreter (/bin/sh
without one), with the SLURM_* variables Slurm sets beside longfair's own
(LONGFAIR_*): SLURM_JOB_ID, SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID (the
--array index), SLURM_ARRAY_TASK_COUNT/MIN/MAX, SLURM_NTASKS,
SLURM_CPUS_PER_TASK, SLURM_JOB_NODELIST, SLURM_NNODES, SLURM_NODEID,
SLURM_PROCID, SLURM_SUBMIT_DIR, SLURM_JOB_NAME, SLURM_JOB_ACCOUNT,
SLURM_JOB_USER, SLURM_MEM_PER_NODE, SLURM_MEM_PER_CPU (with
--mem-per-cpu). Output goes to --output (default
slurm-%j.out, slurm-%A_%a.out for arrays) in the job's directory. An
unknown #SBATCH option is refused with its line unless --ignore-unknown.
The cluster is found through $LONGFAIR_ADDR, the caller through
$LONGFAIR_TOKEN or MUNGE, as for the other commands.

Options:
OPTIONS
Example:
  longfair sbatch job.sh
  longfair sbatch --array=0-99%10 -t 30 sweep.sh input.dat
  longfair sbatch --parsable -d afterok:12 post.sh
`

func sbatchCommand() func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		var o sbatchOptions
		fs := sbatchFlags(&o)
		fs.SetOutput(io.Discard)
		// The options end at the script: what follows is its arguments.
		fs.SetInterspersed(false)
		if err := answerOptionsRequest(args, fs); err != nil {
			return err
		}
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, pflag.ErrHelp) {
				fmt.Fprint(stdout, strings.Replace(sbatchHelp, "OPTIONS\n", fs.FlagUsages(), 1))
				return nil
			}
			return Usagef("%v", err)
		}
		if fs.NArg() < 1 {
			return Usagef("give the batch script to submit: longfair sbatch [options] SCRIPT [ARGS...]")
		}
		path := fs.Arg(0)
		script, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read the batch script: %w", err)
		}
		// The directives first, into a fresh set, then the command line's
		// options again over them.
		var merged sbatchOptions
		all := sbatchFlags(&merged)
		all.SetOutput(io.Discard)
		if err := readDirectives(script, all, o.ignoreUnknown); err != nil {
			return err
		}
		all.SetInterspersed(false)
		if err := all.Parse(args[:len(args)-fs.NArg()]); err != nil {
			return Usagef("%v", err)
		}
		spec, err := sbatchSpec(&merged, path, script, fs.Args()[1:])
		if err != nil {
			return err
		}
		var f clientFlags
		f.register(NewFlags("sbatch"), false)
		c, err := f.dial()
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, stop := signalContext()
		defer stop()
		ctx, cancel := context.WithTimeout(ctx, f.timeout)
		defer cancel()
		job, err := c.Submit(ctx, spec)
		if err != nil {
			return friendly(err, f.timeout)
		}
		if merged.parsable {
			fmt.Fprintln(stdout, job.GetId())
			return nil
		}
		fmt.Fprintf(stdout, "Submitted batch job %d\n", job.GetId())
		return nil
	}
}

// readDirectives parses the script's #SBATCH lines, those before its
// first command, into o with the sbatch option set, one line at a time
// so that an error names its line.
func readDirectives(script []byte, fs *pflag.FlagSet, ignoreUnknown bool) error {
	fs.ParseErrorsAllowlist.UnknownFlags = ignoreUnknown
	defer func() { fs.ParseErrorsAllowlist.UnknownFlags = false }()
	for i, line := range strings.Split(string(script), "\n") {
		trimmed := strings.TrimSpace(line)
		if i == 0 && strings.HasPrefix(trimmed, "#!") || trimmed == "" {
			continue
		}
		if !strings.HasPrefix(trimmed, "#") {
			return nil // the first command: sbatch reads no further
		}
		rest, ok := strings.CutPrefix(trimmed, "#SBATCH")
		if !ok {
			continue
		}
		words, err := shellWords(rest)
		if err != nil {
			return Usagef("line %d: #SBATCH%s: %v", i+1, rest, err)
		}
		if err := fs.Parse(words); err != nil {
			return Usagef("line %d: #SBATCH%s: %v (give --ignore-unknown to skip options longfair does not know)", i+1, rest, err)
		}
		if fs.NArg() > 0 {
			return Usagef("line %d: #SBATCH%s: %q is not an option", i+1, rest, fs.Arg(0))
		}
	}
	return nil
}

// shellWords splits a directive's text as a shell would split plain
// words, with single and double quotes; a '#' starting a word begins a
// comment.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case ch == '#' && !inWord:
			return words, nil
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("a %c quote is not closed", quote)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// sbatchSpec turns the options into the job: its shape, resources and
// terms, and the command that stages and runs the script.
func sbatchSpec(o *sbatchOptions, path string, script []byte, args []string) (client.JobSpec, error) {
	var spec client.JobSpec
	switch {
	case o.mailType != "" || o.mailUser != "":
		return spec, Usagef("--mail-type and --mail-user: longfair sends no mail; follow a job with 'longfair job watch ID' or submit a dependent job with --dependency")
	case o.partition != "":
		return spec, Usagef("--partition %s: longfair has no partitions; a job goes where its demand fits, and accounts' weights share the cluster (give --ignore-unknown to skip it)", o.partition)
	case o.requeue && o.noRequeue:
		return spec, Usagef("--requeue and --no-requeue: give one")
	}
	spec.Account = o.account
	if spec.Account == "" {
		spec.Account = os.Getenv("LONGFAIR_ACCOUNT")
	}
	if spec.Account == "" {
		return spec, Usagef("give the account to charge: #SBATCH -A NAME, --account NAME, or $LONGFAIR_ACCOUNT")
	}
	spec.User = defaultUser()
	spec.Name = o.name
	if spec.Name == "" {
		spec.Name = filepath.Base(path)
	}
	spec.Walltime = time.Hour
	if o.time != "" {
		d, err := slurmTime(o.time)
		if err != nil {
			return spec, Usagef("%v", err)
		}
		spec.Walltime = d
	}
	demand := map[string]float64{}
	nodes := max(o.nodes, 1)
	var err error
	// Without -n, sbatch runs one process per node (or --ntasks-per-node
	// of them), each with -c cores.
	ntasks, nodesSet := o.ntasks, o.nodes > 0
	if ntasks == 0 && (o.perNode > 0 || o.cpusPerTask > 0) {
		ntasks, nodesSet = nodes*max(o.perNode, 1), true
	}
	// With -n alone (#SBATCH --ntasks=1 is in most scripts) sbatch's
	// minimum is one node; longfair allocates a fixed number of nodes, so
	// one node holds them all (give -N or --ntasks-per-node to spread them).
	if ntasks > 0 && o.perNode == 0 {
		nodesSet = true
	}
	if nodes, err = parallelShape(nodes, nodesSet, ntasks, o.perNode, o.cpusPerTask, false, demand); err != nil {
		return spec, err
	}
	if _, ok := demand["cpu"]; !ok {
		demand["cpu"] = float64(max(o.cpusPerTask, 1))
	}
	if o.mem != "" && o.memPerCPU != "" {
		return spec, Usagef("--mem and --mem-per-cpu: give one")
	}
	if m, err := slurmMem("mem", o.mem); err != nil {
		return spec, Usagef("%v", err)
	} else if m > 0 {
		demand["mem"] = m
	}
	if m, err := slurmMem("mem-per-cpu", o.memPerCPU); err != nil {
		return spec, Usagef("%v", err)
	} else if m > 0 {
		demand["mem"] = m * demand["cpu"]
	}
	gpus := o.gpus
	if g, ok := strings.CutPrefix(o.gres, "gpu:"); ok {
		gpus = g
	} else if o.gres != "" {
		return spec, Usagef("--gres %s: longfair knows gpu:N", o.gres)
	}
	if gpus != "" {
		n, err := strconv.Atoi(gpus)
		if err != nil || n < 1 {
			return spec, Usagef("--gpus %q: give a number of GPUs", gpus)
		}
		demand["gpu"] = float64(n)
	}
	spec.Demand, spec.Nodes, spec.Ranks = demand, nodes, ntasks
	spec.Tasks = 1
	array := slurmArray{}
	if o.array != "" {
		if array, err = parseSlurmArray(o.array); err != nil {
			return spec, Usagef("%v", err)
		}
		spec.Tasks, spec.Throttle = int64(len(array.ids)), array.throttle
	}
	spec.MaxAttempts = 0
	if o.noRequeue {
		spec.MaxAttempts = 1
	}
	spec.Exclusive, spec.Dependency, spec.Hold, spec.Nice = o.exclusive, o.dependency, o.hold, o.nice
	if spec.Begin, err = parseBegin(o.begin, time.Now()); err != nil {
		return spec, Usagef("%v", err)
	}
	if spec.Dir, err = submitDir(o.chdir); err != nil {
		return spec, err
	}
	env, _, err := exportEnv(o.export, os.Environ())
	if err != nil {
		return spec, err
	}
	spec.Env, spec.EnvCaptured = env, true
	submitDirAbs, _ := os.Getwd()
	spec.Command = []string{batchWrapper(script, args, array, o, submitDirAbs)}
	return spec, nil
}

// batchWrapper is the shell text a task runs: it sets the SLURM_*
// variables from longfair's, sends output where --output and --error
// say, writes the script (stored in the job with this text) to a file in
// the attempt's temporary directory and runs it with args.
func batchWrapper(script []byte, args []string, array slurmArray, o *sbatchOptions, submitDir string) string {
	sum := sha256.Sum256(script)
	eof := "LONGFAIR_SCRIPT_" + hex.EncodeToString(sum[:8])
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	// The worker sets the SLURM_* names every task gets (worker/slurm_env.go);
	// a batch script adds its array's indexes, its submit directory, its
	// cores per process and its memory per core.
	if len(array.ids) > 0 {
		ids := make([]string, len(array.ids))
		minID, maxID := array.ids[0], array.ids[0]
		for i, id := range array.ids {
			ids[i] = strconv.FormatInt(id, 10)
			minID, maxID = min(minID, id), max(maxID, id)
		}
		// The index of longfair's task LONGFAIR_TASK_INDEX is the
		// (index+1)th listed.
		w(`set -- %s; shift "$LONGFAIR_TASK_INDEX"; export SLURM_ARRAY_TASK_ID="$1"`, strings.Join(ids, " "))
		w(`export SLURM_ARRAY_TASK_COUNT=%d SLURM_ARRAY_TASK_MIN=%d SLURM_ARRAY_TASK_MAX=%d`, len(ids), minID, maxID)
	} else {
		// sbatch sets the SLURM_ARRAY_* names for a job array only, and
		// scripts test them to tell; the worker sets them for every task.
		w(`unset SLURM_ARRAY_JOB_ID SLURM_ARRAY_TASK_ID`)
	}
	w(`export SLURM_SUBMIT_DIR=%s SLURM_CPUS_PER_TASK=%d`, shellQuote(submitDir), max(o.cpusPerTask, 1))
	// As sbatch: --mem-per-cpu in MB (sbatch checked it before).
	if m, err := slurmMem("mem-per-cpu", o.memPerCPU); err == nil && m > 0 {
		w(`export SLURM_MEM_PER_CPU=%d`, int64(m)>>20)
	}
	out, errPath := o.output, o.errorPath
	if out == "" {
		out = "slurm-%j.out"
		if len(array.ids) > 0 {
			out = "slurm-%A_%a.out"
		}
	}
	w(`exec >%s`, outputPattern(out))
	if errPath != "" {
		w(`exec 2>%s`, outputPattern(errPath))
	} else {
		w(`exec 2>&1`)
	}
	w(`script=$(mktemp "${TMPDIR:-/tmp}/longfair-batch.XXXXXX") || exit 1`)
	w(`trap 'rm -f "$script"' EXIT`)
	w(`cat >"$script" <<'%s'`, eof)
	b.Write(script)
	if len(script) > 0 && script[len(script)-1] != '\n' {
		b.WriteByte('\n')
	}
	w(`%s`, eof)
	w(`chmod 700 "$script"`)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	w(`if head -c 2 "$script" | grep -q '^#!'; then "$script" %s; else /bin/sh "$script" %s; fi`, strings.Join(quoted, " "), strings.Join(quoted, " "))
	return b.String()
}

// outputPattern turns an --output pattern into a double-quoted shell word
// that expands it: %j and %A the job, %a the array index, %x the name,
// %u the user, %N the node, %% a %.
func outputPattern(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		ch := p[i]
		if ch == '%' && i+1 < len(p) {
			i++
			switch p[i] {
			case 'j', 'A':
				b.WriteString(`${SLURM_JOB_ID}`)
			case 'a':
				// Outside an array Slurm writes NO_VAL (job_array.html).
				b.WriteString(`${SLURM_ARRAY_TASK_ID:-4294967294}`)
			case 'x':
				b.WriteString(`${SLURM_JOB_NAME}`)
			case 'u':
				b.WriteString(`${SLURM_JOB_USER}`)
			case 'N':
				b.WriteString(`${SLURMD_NODENAME}`)
			case '%':
				b.WriteByte('%')
			default:
				b.WriteByte('%')
				b.WriteByte(p[i])
			}
			continue
		}
		if ch == '"' || ch == '\\' || ch == '$' || ch == '`' {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	b.WriteByte('"')
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
