package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/ops"
	"github.com/longfair/longfair/server"
)

const serverUsage = `Usage: longfair server [flags]

Runs one member of the longfair server group: a Raft node holding the
ledger, a gossip member, and the gRPC API.

Settings come from the defaults, then the --config file (JSON), then flags.

Form a new three-server group (run on each server, with its own id/addresses):

  longfair server --node-id s1 --data-dir /var/lib/longfair \
      --raft-addr 10.0.0.1:7411 --grpc-addr 10.0.0.1:7410 --gossip-addr 10.0.0.1:7412 \
      --bootstrap-expect 3 --join 10.0.0.2:7412 --join 10.0.0.3:7412

A one-server group for trying things out:

  longfair server --node-id dev --data-dir ./data --bootstrap

Config file example (every field optional; durations are strings):

  {
    "node_id": "s1", "data_dir": "/var/lib/longfair",
    "raft_addr": "10.0.0.1:7411", "grpc_addr": "10.0.0.1:7410", "gossip_addr": "10.0.0.1:7412",
    "join": ["10.0.0.2:7412", "10.0.0.3:7412"], "bootstrap_expect": 3,
    "http_addr": "10.0.0.1:7413", "log_level": "info", "log_format": "json",
    "raft": {"heartbeat_timeout": "500ms", "election_timeout": "500ms",
             "leader_lease_timeout": "250ms", "snapshot_threshold": 8192}
  }

Every field is described in deploy/config.md, with systemd units for a
three-server group in deploy/systemd. The --http-addr listener serves
Prometheus metrics at /metrics, liveness at /healthz and readiness at
/readyz (200 once a leader is known and this server has caught up), and
the API as JSON under /v1/ (with tokens; OpenAPI at /v1/openapi.json).

` + serverSecurityHelp + `Flags:
`

// serverFlags are the flags of 'longfair server'. Each is applied over the
// config file only when given on the command line.
type serverFlags struct {
	config, nodeID, dataDir                       string
	raftAddr, grpcAddr, gossipAddr                string
	raftAdvertise, grpcAdvertise, gossipAdvertise string
	join                                          cli.ListFlag
	bootstrapExpect                               int
	bootstrap                                     bool
	logLevel, logFormat                           string
	httpAddr                                      string
	shutdownTimeout                               time.Duration
	workerLossTimeout                             time.Duration
	lookAhead                                     bool
	raftLogStore                                  string
	security                                      securityFlags // server_security.go
}

func newServerFlagSet(f *serverFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serverUsage)
		cli.PrintFlags(stderr, fs)
	}
	fs.StringVar(&f.config, "config", "", "JSON config `file`; flags override its values")
	fs.StringVar(&f.nodeID, "node-id", "", "node `id`, unique in the group (default: the host name)")
	fs.StringVar(&f.dataDir, "data-dir", "", "`directory` for the Raft log, snapshots and state")
	fs.StringVar(&f.raftAddr, "raft-addr", server.DefaultRaftAddr, "Raft listen `host:port`")
	fs.StringVar(&f.grpcAddr, "grpc-addr", server.DefaultGRPCAddr, "gRPC listen `host:port`")
	fs.StringVar(&f.gossipAddr, "gossip-addr", server.DefaultGossipAddr, "gossip listen `host:port` (TCP and UDP)")
	fs.StringVar(&f.raftAdvertise, "raft-advertise", "", "Raft `host:port` peers dial, if not the listen address")
	fs.StringVar(&f.grpcAdvertise, "grpc-advertise", "", "gRPC `host:port` peers and clients dial, if not the listen address")
	fs.StringVar(&f.gossipAdvertise, "gossip-advertise", "", "gossip `host:port` peers dial, if not the listen address")
	fs.Var(&f.join, "join", "gossip `host:port` of a running server; repeat or comma-separate")
	fs.IntVar(&f.bootstrapExpect, "bootstrap-expect", 0, "form a new group once `N` servers see each other")
	fs.BoolVar(&f.bootstrap, "bootstrap", false, "form a one-server group now")
	fs.StringVar(&f.logLevel, "log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&f.httpAddr, "http-addr", server.DefaultHTTPAddr, "listen `host:port` for /metrics, /healthz and /readyz (no token is asked) and the JSON/HTTP API under /v1/ (tokens as for gRPC); '' disables it")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long in-flight calls get to finish on SIGINT/SIGTERM")
	fs.DurationVar(&f.workerLossTimeout, "worker-loss-timeout", server.DefaultWorkerLossTimeout, "how long after a worker was last heard its tasks are rerun elsewhere; workers must fence (--fence-timeout plus --kill-grace) at least 1s sooner")
	fs.StringVar(&f.raftLogStore, "raft-log-store", server.LogStoreBoltDB, "where the Raft log is kept: `store` boltdb (raft-boltdb, two disk syncs per append) or wal (hashicorp/raft-wal, one; experimental upstream); a data dir keeps the store it was started with")
	fs.BoolVar(&f.lookAhead, "look-ahead", false, "give each worker a queue of committed tasks to start as soon as a slot frees, under hmrf, ltdrf, ltaf and ltrf (at most one node's worth; the order bends by at most one queued task per slot)")
	f.security.register(fs)
	return fs
}

// serverConfig builds the configuration: defaults, then the config file,
// then the flags that were given.
func serverConfig(args []string, stderr io.Writer) (server.Config, serverFlags, error) {
	var f serverFlags
	fs := newServerFlagSet(&f, stderr)
	pos, _, err := cli.ParseGNU(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
	}
	if err != nil {
		return server.Config{}, f, err
	}
	if len(pos) > 0 {
		return server.Config{}, f, fmt.Errorf("unexpected argument %q: 'longfair server' takes only flags", pos[0])
	}
	cfg := server.DefaultConfig()
	cfg.HTTPAddr = server.DefaultHTTPAddr
	cfg.ACL.Enabled = true // the production default (server_security.go)
	if f.config != "" {
		var err error
		if cfg, err = server.LoadConfigFile(f.config, cfg); err != nil {
			return server.Config{}, f, err
		}
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "node-id":
			cfg.NodeID = f.nodeID
		case "data-dir":
			cfg.DataDir = f.dataDir
		case "raft-addr":
			cfg.RaftAddr = f.raftAddr
		case "grpc-addr":
			cfg.GRPCAddr = f.grpcAddr
		case "gossip-addr":
			cfg.GossipAddr = f.gossipAddr
		case "raft-advertise":
			cfg.RaftAdvertise = f.raftAdvertise
		case "grpc-advertise":
			cfg.GRPCAdvertise = f.grpcAdvertise
		case "gossip-advertise":
			cfg.GossipAdvertise = f.gossipAdvertise
		case "join":
			cfg.Join = append([]string(nil), f.join...)
		case "bootstrap-expect":
			cfg.BootstrapExpect = f.bootstrapExpect
		case "bootstrap":
			cfg.Bootstrap = f.bootstrap
		case "http-addr":
			cfg.HTTPAddr = f.httpAddr
		case "log-level":
			cfg.LogLevel = f.logLevel
		case "log-format":
			cfg.LogFormat = f.logFormat
		case "worker-loss-timeout":
			cfg.WorkerLossTimeout = server.Duration(f.workerLossTimeout)
		case "look-ahead":
			cfg.LookAhead = f.lookAhead
		case "raft-log-store":
			cfg.Raft.LogStore = f.raftLogStore
		}
	})
	if err := f.security.apply(fs, &cfg); err != nil {
		return server.Config{}, f, err
	}
	if cfg.NodeID == "" {
		host, err := os.Hostname()
		if err != nil {
			return server.Config{}, f, fmt.Errorf("no --node-id given and the host name is unknown (%v): set --node-id", err)
		}
		cfg.NodeID = host
	}
	return cfg, f, cfg.Validate()
}

// runServer runs a server until SIGINT or SIGTERM.
func runServer(args []string, stdout, stderr io.Writer) error {
	cfg, f, err := serverConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	logger, err := ops.NewLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv, err := server.New(cfg, logger)
	if err != nil {
		return err
	}
	// This process runs one server: its /metrics shows hashicorp/raft's
	// and raft-boltdb's own timings too (log appends and their syncs,
	// replication round trips per follower, commits).
	undoLibraryMetrics, err := srv.Metrics().RouteLibraryMetrics()
	if err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	defer undoLibraryMetrics()
	if err := srv.Start(ctx); err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	var failure error
	select {
	case <-ctx.Done():
	case failure = <-srv.Failed():
	}
	logger.Info("stopping server", "timeout", f.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && failure == nil {
		return err
	}
	// A failed server exits non-zero so that its supervisor restarts it.
	return failure
}
