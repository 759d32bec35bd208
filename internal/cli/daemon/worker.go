package daemon

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/worker"
)

const workerUsage = `Usage: longfair worker [flags]

Runs the worker agent of one compute node: it joins the servers' gossip
pool, advertises the node's resources, keeps a stream to the leader and
runs the tasks placed on the node (as /bin/sh -c COMMAND, each in its own
process group and working directory under --work-dir, with its stdout and
stderr kept there for 'longfair logs').

cpu, mem and NVIDIA GPUs (nvidia-smi -L) are detected from the machine
unless given. A MIC node gives its device count with --mic. Tasks get their
own devices, never another running task's: GPUs in CUDA_VISIBLE_DEVICES,
MICs in OFFLOAD_DEVICES. The cluster must know the gpu resource to place
GPU tasks: longfair policy set --add-resource gpu --billing-weight ...
Any other resource is given with --resource name=quantity (the cluster
must declare it: see the add_resources setting).

A CPU node contributed by the account "physics":

  longfair worker --node-id c01 --join 10.0.0.1:7412 --account physics \
      --gossip-addr 10.0.1.1:7414 --grpc-addr 10.0.1.1:7415 --work-dir /var/lib/longfair-worker

A MIC node with two coprocessors and 96 GiB of memory:

  longfair worker --node-id mic01 --join 10.0.0.1:7412 --mic 2 --mem 96G --class mic \
      --gossip-addr 10.0.1.2:7414 --grpc-addr 10.0.1.2:7415 --work-dir /scratch/longfair

Gossip encryption: give every server and worker the same key (16, 24 or 32
random bytes, base64), with --gossip-key or LONGFAIR_GOSSIP_KEY:

  head -c 32 /dev/urandom | base64

` + workerSecurityHelp + `Flags:
`

// workerFlags are the flags of 'longfair worker'.
type workerFlags struct {
	nodeID, workDir             string
	gossipAddr, gossipAdvertise string
	grpcAddr, grpcAdvertise     string
	gossipKey                   string
	join, resources             cli.ListFlag
	cpu, mem                    string
	mic, gpu                    int
	class, account              string
	killGrace, shutdownTimeout  time.Duration
	fenceTimeout                time.Duration
	outputRetention             time.Duration
	unconfined                  bool
	pidsLimit                   int64
	logLevel, logFormat         string
	security                    workerSecurityFlags // worker_security.go
	asSelf                      bool
}

func newWorkerFlagSet(f *workerFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, workerUsage)
		cli.PrintFlags(stderr, fs)
	}
	fs.StringVar(&f.nodeID, "node-id", "", "node `id`, unique among servers and workers (default: the host name)")
	fs.Var(&f.join, "join", "gossip `host:port` of a server; repeat or comma-separate")
	fs.StringVar(&f.gossipAddr, "gossip-addr", worker.DefaultGossipAddr, "gossip listen `host:port` (TCP and UDP)")
	fs.StringVar(&f.gossipAdvertise, "gossip-advertise", "", "gossip `host:port` others dial, if not the listen address")
	fs.StringVar(&f.gossipKey, "gossip-key", "", "base64 `key` encrypting gossip (default: $LONGFAIR_GOSSIP_KEY)")
	fs.StringVar(&f.grpcAddr, "grpc-addr", worker.DefaultGRPCAddr, "listen `host:port` of the task output service")
	fs.StringVar(&f.grpcAdvertise, "grpc-advertise", "", "task output `host:port` servers dial, if not the listen address")
	fs.StringVar(&f.cpu, "cpu", "", "cpu `cores` to offer (default: all of the machine's)")
	fs.StringVar(&f.mem, "mem", "", "memory to offer, in bytes or with K/M/G/T (`64G`; default: all of the machine's)")
	fs.IntVar(&f.mic, "mic", 0, "`number` of MIC devices (numbered from 0 in OFFLOAD_DEVICES)")
	fs.IntVar(&f.gpu, "gpu", -1, "`number` of GPUs (numbered from 0 in CUDA_VISIBLE_DEVICES; default: those nvidia-smi -L lists)")
	fs.Var(&f.resources, "resource", "another resource as `name=quantity`; repeat for several")
	fs.StringVar(&f.class, "class", "", "node `class` shown in listings, such as cpu or mic")
	fs.StringVar(&f.account, "account", "", "`account` that contributed this node (its weight can come from it)")
	fs.StringVar(&f.workDir, "work-dir", "", "`directory` for task working directories and output (required)")
	fs.DurationVar(&f.killGrace, "kill-grace", 10*time.Second, "time between SIGTERM and SIGKILL when a task is stopped")
	fs.DurationVar(&f.fenceTimeout, "fence-timeout", worker.DefaultFenceTimeout, "kill the running tasks when the leader has not been reached for this long (then --kill-grace); with the grace, at least 1s below the servers' worker_loss_timeout")
	fs.DurationVar(&f.outputRetention, "output-retention", worker.DefaultOutputRetention, "how long an ended task's output and leftover working directory are kept after they were last written (0: forever)")
	fs.BoolVar(&f.unconfined, "unconfined", false, "run tasks without cgroups: their cpu and mem are not enforced and what they leave behind is not killed (a laptop, a test; never a shared node). Without it the worker refuses to start unless it is root with cgroup controllers")
	fs.Int64Var(&f.pidsLimit, "pids-limit", worker.DefaultPidsLimit, "most processes and threads one task may have (0: no limit)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log `format`: text or json")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long running tasks get to stop on SIGINT/SIGTERM")
	fs.BoolVar(&f.asSelf, "as-self", false, "run every task as this worker's own user, even as root (dev clusters, tests); by default a root worker runs each task as its user's Unix account")
	f.security.register(fs)
	return fs
}

// workerConfig builds the agent's configuration from the flags.
func workerConfig(args []string, stderr io.Writer) (worker.Config, workerFlags, error) {
	var f workerFlags
	fs := newWorkerFlagSet(&f, stderr)
	pos, _, err := cli.ParseGNU(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
	}
	if err != nil {
		return worker.Config{}, f, err
	}
	if len(pos) > 0 {
		return worker.Config{}, f, fmt.Errorf("unexpected argument %q: 'longfair worker' takes only flags", pos[0])
	}
	cfg := worker.DefaultConfig()
	cfg.NodeID, cfg.Join, cfg.WorkDir = f.nodeID, []string(f.join), f.workDir
	cfg.GossipAddr, cfg.GossipAdvertise = f.gossipAddr, f.gossipAdvertise
	cfg.GRPCAddr, cfg.GRPCAdvertise = f.grpcAddr, f.grpcAdvertise
	cfg.Class, cfg.Account, cfg.KillGrace = f.class, f.account, f.killGrace
	cfg.Unconfined, cfg.PidsLimit = f.unconfined, f.pidsLimit
	cfg.FenceTimeout = f.fenceTimeout
	cfg.OutputRetention = f.outputRetention
	cfg.RunAsUsers = !f.asSelf
	if cfg.NodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return worker.Config{}, f, fmt.Errorf("no --node-id given and the host name is unknown (%v): set --node-id", err)
		}
		cfg.NodeID = host
	}
	key := f.gossipKey
	if key == "" {
		key = os.Getenv("LONGFAIR_GOSSIP_KEY")
	}
	if key != "" {
		k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
		if err != nil {
			return worker.Config{}, f, fmt.Errorf("gossip key is not base64 (%v): make one with 'head -c 32 /dev/urandom | base64'", err)
		}
		cfg.GossipKey = k
	}
	if err := f.security.apply(&cfg); err != nil {
		return worker.Config{}, f, err
	}
	res, err := workerResources(f)
	if err != nil {
		return worker.Config{}, f, err
	}
	cfg.Resources = res
	return cfg, f, cfg.Validate()
}

// workerResources gathers --cpu, --mem, --mic and --resource; what is not
// given is detected by the agent.
func workerResources(f workerFlags) (map[string]float64, error) {
	res := make(map[string]float64)
	for _, r := range f.resources {
		name, q, err := worker.ParseResource(r)
		if err != nil {
			return nil, err
		}
		res[name] = q
	}
	if f.cpu != "" {
		q, err := strconv.ParseFloat(f.cpu, 64)
		if err != nil || q < 0 {
			return nil, fmt.Errorf("--cpu %q is not a number of cores (for example 16 or 0.5)", f.cpu)
		}
		res[worker.ResourceCPU] = q
	}
	if f.mem != "" {
		q, err := worker.ParseQuantity(f.mem)
		if err != nil {
			return nil, fmt.Errorf("--mem: %w", err)
		}
		res[worker.ResourceMem] = q
	}
	if f.mic < 0 {
		return nil, fmt.Errorf("--mic is %d: give the number of MIC devices, 0 or more", f.mic)
	}
	if f.mic > 0 {
		res[worker.ResourceMIC] = float64(f.mic)
	}
	if f.gpu >= 0 {
		res[worker.ResourceGPU] = float64(f.gpu)
	}
	return res, nil
}

// runWorker runs a worker until SIGINT or SIGTERM, then stops its tasks
// and leaves.
func runWorker(args []string, stdout, stderr io.Writer) error {
	cfg, f, err := workerConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger, err := ops.NewLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ag, err := worker.New(cfg, logger)
	if err != nil {
		return err
	}
	if err := ag.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	logger.Info("stopping worker", "timeout", f.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	return ag.Shutdown(sctx)
}
