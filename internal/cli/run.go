package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
)

const runHelp = `Usage: longfair run [--ntasks N] [--label] -- COMMAND [ARG...]

Inside a parallel task, start COMMAND as N processes across the task's
nodes (as srun does inside an allocation): by default LONGFAIR_NTASKS of
them, in blocks of LONGFAIR_NTASKS_PER_NODE per node in LONGFAIR_NODELIST
order. Each runs through its node's worker (longfair exec) with
LONGFAIR_PROCID (its rank, from 0), LONGFAIR_LOCALID (its place on its
node) and LONGFAIR_NODEID, and with SLURM_PROCID, SLURM_LOCALID and
SLURM_NTASKS too, for programs that read those. Output is passed through
(with --label, each line prefixed by its rank). It exits with the first
non-zero status of its processes.

Examples:
  longfair run -- hostname
  longfair run --ntasks 8 --label -- ./solver input.dat
`

// runCommand is `longfair run`.
func runCommand() func(args []string, stdout, stderr io.Writer) error {
	return func(args []string, stdout, stderr io.Writer) error {
		fs := NewFlags("run")
		ntasks := fs.Int("ntasks", 0, "processes to start (default $LONGFAIR_NTASKS)")
		label := fs.Bool("label", false, "prefix every output line with the rank that wrote it")
		pos, rest, err := ParseFlags(fs, args, runHelp, stdout)
		if err != nil {
			return err
		}
		argv := rest
		if argv == nil {
			argv = pos
		}
		if len(argv) == 0 {
			return Usagef("give the command to run after --: longfair run -- COMMAND")
		}
		nodes := strings.Split(os.Getenv("LONGFAIR_NODELIST"), ",")
		if os.Getenv("LONGFAIR_NODELIST") == "" {
			return errors.New("not inside a parallel task: longfair run starts processes across a task's nodes (submit with --nodes N, and run it from the task)")
		}
		n := *ntasks
		if n == 0 {
			n, _ = strconv.Atoi(os.Getenv("LONGFAIR_NTASKS"))
		}
		if n < 1 {
			return Usagef("--ntasks %d: start 1 or more processes", n)
		}
		ctx, cancel := signalContext()
		defer cancel()
		return runRanks(ctx, nodes, n, argv, *label, stdout, stderr)
	}
}

// runRanks starts n copies of argv over nodes, in blocks of
// ceil(n/len(nodes)) per node, and waits for all of them.
func runRanks(ctx context.Context, nodes []string, n int, argv []string, label bool, stdout, stderr io.Writer) error {
	per := (n + len(nodes) - 1) / len(nodes)
	var mu sync.Mutex // one line at a time on each stream
	out := func(w io.Writer, rank int) *rankWriter {
		return &rankWriter{w: w, mu: &mu, prefix: labelFor(label, rank)}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for rank := range n {
		node, local := nodes[rank/per], rank%per
		extra := []string{
			"LONGFAIR_PROCID=" + strconv.Itoa(rank), "LONGFAIR_LOCALID=" + strconv.Itoa(local),
			"SLURM_PROCID=" + strconv.Itoa(rank), "SLURM_LOCALID=" + strconv.Itoa(local), "SLURM_NTASKS=" + strconv.Itoa(n),
		}
		wg.Go(func() {
			o, e := out(stdout, rank), out(stderr, rank)
			errs[rank] = runExec(ctx, node, argv, extra, nil, o, e)
			o.flush()
			e.flush()
		})
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			var st ExitStatus
			if errors.As(err, &st) {
				return st
			}
			return fmt.Errorf("rank %d on %s: %w", rank, nodes[rank/per], err)
		}
	}
	return nil
}

func labelFor(label bool, rank int) string {
	if !label {
		return ""
	}
	return strconv.Itoa(rank) + ": "
}

// rankWriter writes one rank's output whole lines at a time, prefixed.
type rankWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

// flush writes what is left of a last line without a newline.
func (r *rankWriter) flush() {
	if len(r.buf) > 0 {
		r.mu.Lock()
		_, _ = io.WriteString(r.w, r.prefix+string(r.buf)+"\n")
		r.mu.Unlock()
		r.buf = nil
	}
}

func (r *rankWriter) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := strings.IndexByte(string(r.buf), '\n')
		if i < 0 {
			break
		}
		r.mu.Lock()
		_, err := io.WriteString(r.w, r.prefix+string(r.buf[:i+1]))
		r.mu.Unlock()
		if err != nil {
			return 0, err
		}
		r.buf = r.buf[i+1:]
	}
	return len(p), nil
}
