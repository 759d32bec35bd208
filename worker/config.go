package worker

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ops"
)

// Default listen addresses of a worker. Like the server's, they bind to
// loopback so that a worker started without flags is reachable only from
// its own machine.
const (
	DefaultGossipAddr = "127.0.0.1:7414"
	DefaultGRPCAddr   = "127.0.0.1:7415"
)

// Config is one worker's configuration. Start from DefaultConfig.
type Config struct {
	// NodeID names the node in the ledger and the gossip pool; it must be
	// unique among servers and workers.
	NodeID string
	// Join lists gossip addresses of servers (or other workers). The agent
	// keeps retrying them until one answers.
	Join []string
	// GossipAddr is the host:port the gossip member binds (TCP and UDP);
	// GossipAdvertise, when set, is what others dial instead.
	GossipAddr      string
	GossipAdvertise string
	// GossipKey encrypts gossip traffic (AES, 16, 24 or 32 bytes). Every
	// server and worker of the pool must use the same key.
	GossipKey []byte
	// Token is the secret of a worker token ('longfair acl token create
	// --role worker'), sent as the bearer token of every call to the
	// servers. Servers that check tokens refuse a worker without one.
	Token string
	// RunAsUsers runs each task as its user's Unix account (identity.go);
	// it needs root, and a worker that is not root runs tasks as itself
	// and says so. 'longfair worker' sets it unless given --as-self.
	RunAsUsers bool
	// TLS secures the calls to the servers and the TaskOutput listener
	// (auth.go); every server and worker of a cluster uses TLS, or none.
	TLS ops.TLSConfig

	// GRPCAddr is where the TaskOutput service listens; GRPCAdvertise,
	// when set, is the address servers dial instead.
	GRPCAddr      string
	GRPCAdvertise string

	// Resources is the node's capacity by resource name. cpu and mem are
	// detected from the machine when absent; mic is the number of MIC
	// devices, numbered 0 to mic-1 in OFFLOAD_DEVICES.
	Resources map[string]float64
	// Class is free text such as "cpu" or "mic" (at most 64 bytes).
	Class string
	// Account is the account that contributed the node, if any.
	Account string

	// WorkDir holds each attempt's working directory and output files.
	WorkDir string
	// OutputRetention is how long the output files and leftover working
	// directory of an attempt that ended are kept after they were last
	// written; 0 keeps them forever (janitor.go).
	OutputRetention time.Duration
	// KillGrace is how long a task gets between SIGTERM and SIGKILL when
	// its walltime is over, its job is cancelled or it is fenced.
	KillGrace time.Duration
	// FenceTimeout is how long the worker's tasks keep running while the
	// worker is out of contact with the leader (stopped, hung, cut off or
	// dead): then each task's supervisor kills it (SIGTERM, then SIGKILL
	// after KillGrace), so that it never runs at the same time as the
	// rerun the servers start once worker_loss_timeout has passed. It must
	// be well above a leader failover (a few seconds), and FenceTimeout +
	// KillGrace must be below the servers' worker_loss_timeout by their
	// margin: the leader refuses a worker that fences too late.
	FenceTimeout time.Duration
	// Executable is the program the task supervisor runs as (it
	// must call Supervise first in main, and be this release: agent and
	// supervisor share a private protocol); empty is this program
	// (/proc/self/exe on Linux, so that an upgrade replacing the file does
	// not change what running agents start).
	Executable string
	// ClientExecutable is the longfair program a parallel task's rsh
	// agent runs (`longfair exec`, allocation.go); empty means this
	// program, which is right for `longfair worker`.
	ClientExecutable string
	// Unconfined runs tasks without cgroups: their demand is not
	// enforced and what they leave outside their process group is not
	// killed. Without it a worker that is not root or finds no usable
	// cgroup controllers refuses to start (cgroup.go).
	Unconfined bool
	// Simulate runs no process for an attempt (simulate.go): for the
	// load generator, never on a real node. It implies Unconfined.
	Simulate bool
	// DeviceFiles are, by device class (gpu, mic), the device file of
	// each index, so that a confined attempt can open only its own
	// (devices.go); a class left out is /dev/nvidiaN or /dev/micN for
	// each index where that exists.
	DeviceFiles map[string][]string
	// PidsLimit is the most processes and threads one attempt may have
	// on a confined worker (DefaultPidsLimit by default; 0: no limit).
	PidsLimit int64
	// Observer, when set, is told when attempts start and end (metrics,
	// benchmarks). Its methods must not block.
	Observer Observer
}

// Observer hears about the attempts this agent runs.
type Observer interface {
	// TaskStarted is called right after an attempt's process started (its
	// exec succeeded); at is that moment.
	TaskStarted(job uint64, task int64, attempt int32, at time.Time)
	// TaskEnded is called after it exited (code is 128+signal when a
	// signal ended it).
	TaskEnded(job uint64, task int64, attempt int32, code int32, runtime time.Duration)
}

// DefaultConfig returns the default addresses and timings, with no node id,
// join addresses or work dir.
func DefaultConfig() Config {
	return Config{
		GossipAddr: DefaultGossipAddr,
		GRPCAddr:   DefaultGRPCAddr,
		KillGrace:  10 * time.Second,
		// With the kill grace, 40 s: below the servers' default
		// worker_loss_timeout (60 s) by more than their margin, and far
		// above a leader failover (one to three seconds).
		FenceTimeout: DefaultFenceTimeout,

		OutputRetention: DefaultOutputRetention,
		PidsLimit:       DefaultPidsLimit,
	}
}

// DefaultFenceTimeout is the default FenceTimeout; MinFenceTimeout is the
// shortest accepted: the lease is renewed every leader heartbeat (half a
// second), and a few must be allowed to go missing.
const (
	DefaultFenceTimeout = 30 * time.Second
	MinFenceTimeout     = time.Second
)

// Validate checks the configuration and says what to change when it is
// wrong.
func (c Config) Validate() error {
	var errs []error
	if c.NodeID == "" {
		errs = append(errs, errors.New("node id is empty: set --node-id to a name unique among servers and workers (usually the host name)"))
	} else if err := longfairv1.CheckNodeID("node id", c.NodeID); err != nil {
		// The rule worker tokens are bound by, so every worker's id can be.
		errs = append(errs, errors.New(status.Convert(err).Message()))
	}
	if len(c.Join) == 0 {
		errs = append(errs, errors.New("no join address: give --join with the gossip address of a server (host:port)"))
	}
	for _, j := range c.Join {
		if _, _, err := net.SplitHostPort(j); err != nil {
			errs = append(errs, fmt.Errorf("join address %q is not host:port: give the gossip address of a server", j))
		}
	}
	for _, a := range []struct{ name, bind, advertise string }{
		{"gossip", c.GossipAddr, c.GossipAdvertise},
		{"grpc", c.GRPCAddr, c.GRPCAdvertise},
	} {
		if err := checkAddrs(a.name, a.bind, a.advertise); err != nil {
			errs = append(errs, err)
		}
	}
	switch len(c.GossipKey) {
	case 0, 16, 24, 32:
	default:
		errs = append(errs, fmt.Errorf("gossip key is %d bytes: give 16, 24 or 32 bytes (base64 on the command line), the same on every server and worker", len(c.GossipKey)))
	}
	for name, v := range c.Resources {
		if err := core.CheckName("resource name", name); err != nil {
			errs = append(errs, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e18 {
			errs = append(errs, fmt.Errorf("resource %s is %v: give a finite number from 0 to 1e18", name, v))
		}
	}
	for _, d := range deviceClasses {
		if n := c.Resources[d.resource]; n != math.Trunc(n) || n > maxDevices {
			errs = append(errs, fmt.Errorf("%s is %v: give the number of %s devices, a whole number up to %d", d.resource, n, d.resource, maxDevices))
		}
	}
	// The rules the leader checks the node's advert by (fsm.NodeUp).
	if err := core.CheckText("node class", c.Class, core.MaxNameLength); err != nil {
		errs = append(errs, err)
	}
	if c.Account != "" {
		if err := core.CheckName("account", c.Account); err != nil {
			errs = append(errs, err)
		}
	}
	if c.WorkDir == "" {
		errs = append(errs, errors.New("work dir is empty: set --work-dir to a directory the worker may own (task directories and output go there)"))
	}
	errs = append(errs, c.checkSecurity()...)
	if c.KillGrace < 0 {
		errs = append(errs, fmt.Errorf("kill grace is %v: give zero or a positive duration", c.KillGrace))
	}
	if c.FenceTimeout < MinFenceTimeout {
		errs = append(errs, fmt.Errorf("fence timeout is %v: give at least %v, well above a leader failover (the default is %v)", c.FenceTimeout, MinFenceTimeout, DefaultFenceTimeout))
	}
	if c.PidsLimit < 0 {
		errs = append(errs, fmt.Errorf("pids limit is %d: give a positive number of processes per task, or 0 for no limit", c.PidsLimit))
	}
	if c.OutputRetention < 0 {
		errs = append(errs, fmt.Errorf("output retention is %v: give a positive duration, or 0 to keep task output forever", c.OutputRetention))
	}
	return errors.Join(errs...)
}

// checkAddrs validates a listen address and its advertise address, the
// same way the server does.
func checkAddrs(name, bind, advertise string) error {
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return fmt.Errorf("%s address %q is not host:port (for example 127.0.0.1:7414): %v", name, bind, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%s address %q: port is not a number from 0 to 65535", name, bind)
	}
	if advertise != "" {
		ah, ap, err := net.SplitHostPort(advertise)
		if err != nil {
			return fmt.Errorf("%s advertise address %q is not host:port: %v", name, advertise, err)
		}
		if ip := net.ParseIP(ah); ah == "" || (ip != nil && ip.IsUnspecified()) {
			return fmt.Errorf("%s advertise address %q has no host others can dial: give this machine's address", name, advertise)
		}
		if p, err := strconv.Atoi(ap); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("%s advertise address %q needs a fixed port others can dial", name, advertise)
		}
		return nil
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("%s address %q listens on every interface, which others cannot dial: set the %s advertise address to an address of this machine they can reach", name, bind, name)
	}
	return nil
}

// withDetected returns the resources with cpu and mem filled in from the
// machine where the configuration leaves them out.
func withDetected(given map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(given)+2)
	for k, v := range given {
		out[k] = v
	}
	for k, v := range DetectResources() {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}
