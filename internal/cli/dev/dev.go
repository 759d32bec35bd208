package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/ops"
)

const devHelp = `Usage: longfair dev [flags]

Runs a whole longfair cluster on this machine, on loopback, to try it: three
servers forming one Raft group and three workers (two CPU nodes and one
node with two MIC devices), each its own process, with ports chosen free.
It bootstraps the ACL with an admin token (kept in admin.token), gives each
worker a worker token bound to its node id, creates two accounts with users
and SU grants (astro with user ann, bio with user bob), prints how to use
the CLI against it, and writes into its directory:

  dev.env    exports of LONGFAIR_ADDR and LONGFAIR_TOKEN (and a default
             LONGFAIR_ACCOUNT and LONGFAIR_USER): 'source dev.env'
  dev.json   each server's and worker's id, pid, addresses and log file

Ctrl-C (or SIGTERM) stops the workers, then the servers. Without --dir the
cluster lives in a new temporary directory, removed when it stops (unless
--keep); with --dir it stays, and running dev again there resumes it.

--demo also submits a competing workload for the two accounts and prints
the fairness table each time it changes.

Examples:
  longfair dev
  longfair dev --demo
  longfair dev --dir ./devcluster     # then, in another shell: source ./devcluster/dev.env
`

// devCluster is what dev started.
type devCluster struct {
	Dir     string      `json:"dir"`
	PID     int         `json:"pid"`
	Addr    string      `json:"addr"`
	Servers []*devChild `json:"servers"`
	Workers []*devChild `json:"workers"`
	// ACL is whether the servers check tokens; ACLOff says why dev turned
	// the checks off.
	ACL    bool   `json:"acl"`
	ACLOff string `json:"acl_off,omitempty"`
	Token  string `json:"-"`
}

func (d *devCluster) children() []*devChild {
	return append(append([]*devChild(nil), d.Workers...), d.Servers...)
}

// stop stops the workers first (their tasks end and are reported while
// the servers still run), then the servers.
func (d *devCluster) stop() {
	stopAll(d.Workers, 40*time.Second)
	stopAll(d.Servers, 15*time.Second)
}

func stopAll(list []*devChild, grace time.Duration) {
	done := make(chan struct{}, len(list))
	for _, c := range list {
		go func() {
			c.stop(grace)
			done <- struct{}{}
		}()
	}
	for range list {
		<-done
	}
}

func runDev(args []string, stdout, stderr io.Writer) error {
	var (
		dir, logLevel string
		demo, keep    bool
		noWorkers     bool
		lookAhead     bool
		logStore      string
		startTimeout  time.Duration
	)
	fs := cli.NewFlags("dev")
	fs.StringVar(&dir, "dir", "", "`directory` for the cluster's data, logs, dev.env and dev.json (default: a new temporary one)")
	fs.BoolVar(&demo, "demo", false, "submit a competing workload and print the fairness table as it changes")
	fs.BoolVar(&keep, "keep", false, "keep the temporary directory when the cluster stops")
	fs.BoolVar(&noWorkers, "no-workers", false, "start only the three servers")
	fs.StringVar(&logLevel, "log-level", "info", "log `level` of the servers and workers (their logs are in the directory)")
	fs.BoolVar(&lookAhead, "look-ahead", false, "start the servers with --look-ahead: workers start queued tasks as soon as a slot frees")
	fs.StringVar(&logStore, "raft-log-store", "", "start the servers with --raft-log-store `store`: boltdb or wal (a resumed cluster needs the store it started with)")
	fs.DurationVar(&startTimeout, "start-timeout", 60*time.Second, "give up when the cluster is not up within this `duration`")
	pos, _, err := cli.ParseFlags(fs, args, devHelp, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q: 'longfair dev' takes only flags", pos[0])
	}
	if _, err := ops.NewLogger(io.Discard, logLevel, "json"); err != nil {
		return cli.Usagef("--log-level: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the longfair binary to run the servers with: %w", err)
	}
	temp := dir == ""
	if temp {
		if dir, err = os.MkdirTemp("", "longfair-dev-"); err != nil {
			return fmt.Errorf("create a temporary directory: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create --dir: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := &devCluster{Dir: dir, PID: os.Getpid()}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	var serverFlags []string
	if lookAhead {
		serverFlags = append(serverFlags, "--look-ahead")
	}
	if logStore != "" {
		serverFlags = append(serverFlags, "--raft-log-store", logStore)
	}
	err = d.start(startCtx, exe, logLevel, !noWorkers, serverFlags, stdout)
	cancel()
	if err != nil {
		d.stop()
		if ctx.Err() != nil {
			if temp && !keep {
				os.RemoveAll(dir)
			}
			return errors.New("interrupted while starting; everything started was stopped")
		}
		return fmt.Errorf("%w; everything started was stopped, logs are in %s", err, dir)
	}
	printDevUsage(stdout, d, noWorkers)

	if demo {
		go runDemo(ctx, d, stdout)
	}
	d.supervise(ctx, stderr)

	fmt.Fprintln(stdout, "\nlongfair dev: stopping the workers, then the servers…")
	d.stop()
	os.Remove(filepath.Join(dir, "dev.env"))
	if temp && !keep {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("remove %s: %w", dir, err)
		}
		fmt.Fprintln(stdout, "longfair dev: stopped; removed", dir)
		return nil
	}
	fmt.Fprintln(stdout, "longfair dev: stopped; its state and logs stay in", dir)
	return nil
}

// supervise waits for Ctrl-C, reporting children that exit on their own:
// the group survives one server or any worker stopping (try kill -9 on
// the leader), so dev keeps going until the last server has gone.
func (d *devCluster) supervise(ctx context.Context, stderr io.Writer) {
	reported := map[*devChild]bool{}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		alive := 0
		for _, c := range d.children() {
			if !c.exited() {
				if c.Kind == "server" {
					alive++
				}
				continue
			}
			if !reported[c] {
				reported[c] = true
				fmt.Fprintf(stderr, "longfair dev: %s %s (pid %d) exited: %v; see %s\n", c.Kind, c.ID, c.PID, c.err, c.LogFile)
			}
		}
		if alive == 0 {
			fmt.Fprintln(stderr, "longfair dev: every server has exited")
			return
		}
	}
}

func printDevUsage(w io.Writer, d *devCluster, noWorkers bool) {
	self := os.Args[0]
	if !strings.ContainsRune(self, filepath.Separator) {
		self = "longfair"
	}
	fmt.Fprintf(w, "longfair dev: a cluster is running in %s\n\n", d.Dir)
	for _, s := range d.Servers {
		fmt.Fprintf(w, "  server %-6s pid %-7d gRPC %s  raft %s  gossip %s\n", s.ID, s.PID, s.Addrs["grpc"], s.Addrs["raft"], s.Addrs["gossip"])
	}
	for _, wk := range d.Workers {
		fmt.Fprintf(w, "  worker %-6s pid %-7d gRPC %s  gossip %s\n", wk.ID, wk.PID, wk.Addrs["grpc"], wk.Addrs["gossip"])
	}
	if noWorkers {
		fmt.Fprintln(w, "  (no workers: --no-workers)")
	}
	fmt.Fprintf(w, "\n  accounts: %s\n", devAccountsSummary())
	if d.ACL {
		fmt.Fprintf(w, "  tokens:   the servers check them; dev.env holds the admin token, %s holds it too\n", filepath.Join(d.Dir, "admin.token"))
	} else if d.ACLOff != "" {
		fmt.Fprintf(w, "  tokens:   not checked: %s\n", d.ACLOff)
	} else {
		fmt.Fprintln(w, "  tokens:   these servers do not check them (no ACL service)")
	}
	fmt.Fprintf(w, `
Use it from another shell:

  source %s
  %[2]s status
  %[2]s submit --array 8 --cpu 1 --walltime 5m -- sleep 20        # as ann, charged to astro
  %[2]s submit --account bio --user bob --array 8 --walltime 5m -- sleep 20
  %[2]s submit --mic 1 --walltime 5m -- 'echo devices $OFFLOAD_DEVICES'
  %[2]s jobs
  %[2]s fairness --watch 2s
  %[2]s explain 1
  %[2]s ledger verify

Logs: %s/*/*.log — dev.json lists every process. Press Ctrl-C to stop the cluster.
`, filepath.Join(d.Dir, "dev.env"), self, d.Dir)
}

// devToken is the admin token dev creates: random, in dev.env.
func devToken() string { return "lf-dev-" + client.NewRequestID() }
