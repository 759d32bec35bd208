package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/longfair/longfair/core"
	"github.com/longfair/longfair/ops"
)

// Default listen addresses. They bind to loopback so that a server started
// without flags is reachable only from its own machine; a real group sets
// addresses its peers can reach.
const (
	DefaultGRPCAddr   = "127.0.0.1:7410"
	DefaultRaftAddr   = "127.0.0.1:7411"
	DefaultGossipAddr = "127.0.0.1:7412"
	// DefaultHTTPAddr is where 'longfair server' serves /metrics, /healthz
	// and /readyz unless told otherwise. DefaultConfig leaves HTTPAddr
	// empty, so a server embedded in another program (or a test) binds no
	// HTTP port it did not ask for.
	DefaultHTTPAddr = "127.0.0.1:7413"
)

// Config is one server's configuration. Start from DefaultConfig: the zero
// value has no Raft timings.
type Config struct {
	// NodeID names this server in the Raft configuration and the gossip
	// pool. It must be unique in the group and must not change for the
	// life of the data dir.
	NodeID string `json:"node_id"`
	// DataDir holds the Raft log, snapshots and the FSM's database.
	DataDir string `json:"data_dir"`

	// RaftAddr, GRPCAddr and GossipAddr are host:port listen addresses.
	// Port 0 picks a free port (tests use 127.0.0.1:0).
	RaftAddr   string `json:"raft_addr"`
	GRPCAddr   string `json:"grpc_addr"`
	GossipAddr string `json:"gossip_addr"`
	// The *Advertise addresses are what peers dial, when that differs from
	// the listen address (for example when listening on 0.0.0.0). Empty
	// means "the address actually bound".
	RaftAdvertise   string `json:"raft_advertise,omitempty"`
	GRPCAdvertise   string `json:"grpc_advertise,omitempty"`
	GossipAdvertise string `json:"gossip_advertise,omitempty"`

	// Join lists gossip addresses of servers already running. The server
	// keeps retrying them in the background until one answers.
	Join []string `json:"join,omitempty"`
	// BootstrapExpect forms a new group once this many servers without
	// Raft state see each other in the gossip pool. Zero disables it.
	BootstrapExpect int `json:"bootstrap_expect,omitempty"`
	// Bootstrap forms a one-server group at once; more servers are added
	// when they join the gossip pool or with the operator API.
	Bootstrap bool `json:"bootstrap,omitempty"`

	// TLS secures the gRPC listener, the Raft transport and every
	// connection the server dials (see ops.TLSConfig). Every server of a
	// group must use TLS, or none.
	TLS ops.TLSConfig `json:"tls"`
	// GossipKey encrypts gossip (16, 24 or 32 bytes; base64 in JSON). Every
	// server and worker of the pool must use the same key.
	GossipKey []byte `json:"gossip_key,omitempty"`
	// ACL turns token checks on and bootstraps the first admin token.
	ACL ACLConfig `json:"acl"`

	Raft RaftConfig `json:"raft"`

	// WorkerLossTimeout is how long after the leader last heard a worker
	// (or, on a new leader, after it took over) the worker's running
	// attempts are declared lost and rerun elsewhere. The node itself goes
	// down, taking no new tasks, within seconds; its attempts wait this
	// long because the worker may still run them until it fences them
	// (worker --fence-timeout, plus its --kill-grace), which must come at
	// least fenceMargin earlier: the leader refuses a worker that fences
	// later. It must be well above a leader failover.
	WorkerLossTimeout Duration `json:"worker_loss_timeout"`

	// LookAhead lets the leader give each worker a queue of committed
	// tasks to start the moment a slot frees, rather than a commit later
	// (fsm: lookahead.go): at most one node's worth, one-node tasks only,
	// under the long-term policies (hmrf, ltdrf, ltaf, ltrf). The policy's
	// order then bends by at most one queued task per slot. Off by
	// default: it shortens a slot's refill, which pays where tasks are
	// short against the commit path, and costs some exactness of the
	// shares (deploy/config.md has the figures).
	LookAhead bool `json:"look_ahead,omitempty"`

	// StateCheck is how often the leader has every replica digest and
	// compare its state (integrity.go).
	StateCheck StateCheckConfig `json:"state_check"`

	// HTTPAddr is the host:port of the HTTP listener: Prometheus metrics
	// at /metrics, liveness at /healthz, readiness at /readyz, which take
	// no token, and the JSON/HTTP API under /v1/, which takes the same
	// tokens as gRPC (http_api.go). With TLS configured it serves HTTPS.
	// Empty disables it.
	HTTPAddr string `json:"http_addr"`
	// LogLevel (debug, info, warn, error) and LogFormat (text, json) are
	// how 'longfair server' logs; a Server built with New logs to the
	// logger it is given.
	LogLevel  string `json:"log_level,omitempty"`
	LogFormat string `json:"log_format,omitempty"`
}

// RaftConfig holds the Raft timings. The defaults suit servers on one LAN
// and bring a new leader up well within three seconds of losing the old one.
type RaftConfig struct {
	// HeartbeatTimeout is how long a follower waits without hearing from
	// the leader before it starts an election.
	HeartbeatTimeout Duration `json:"heartbeat_timeout"`
	// ElectionTimeout is how long a candidate waits for votes.
	ElectionTimeout Duration `json:"election_timeout"`
	// LeaderLeaseTimeout is how long a leader keeps leading without
	// contact with a quorum; it must not exceed HeartbeatTimeout.
	LeaderLeaseTimeout Duration `json:"leader_lease_timeout"`
	// CommitTimeout bounds how long an idle leader waits before telling
	// followers the new commit index.
	CommitTimeout Duration `json:"commit_timeout"`
	// MaxAppendEntries is how many log entries go into one AppendEntries
	// RPC, and so how many concurrent proposals share one disk sync.
	MaxAppendEntries int `json:"max_append_entries"`
	// SnapshotInterval and SnapshotThreshold decide when Raft compacts
	// its log: every interval, if at least threshold entries are new.
	SnapshotInterval  Duration `json:"snapshot_interval"`
	SnapshotThreshold uint64   `json:"snapshot_threshold"`
	// TrailingLogs is how many entries stay after a snapshot, so a
	// briefly lagging follower catches up from the log instead of a
	// snapshot.
	TrailingLogs uint64 `json:"trailing_logs"`
	// SnapshotsRetained is how many snapshot files are kept on disk.
	SnapshotsRetained int `json:"snapshots_retained"`
	// LogStore is where the Raft log is kept: LogStoreBoltDB (the
	// default) or LogStoreWAL. A data dir keeps the store it was started
	// with; to change it, a server rejoins with an empty data dir.
	LogStore string `json:"log_store"`
}

// StateCheckConfig sets the periodic state check: the leader commits a
// checkpoint, every replica digests its state at that index, and the next
// checkpoint carries the leader's digest for every replica to compare.
type StateCheckConfig struct {
	// Interval is the longest time between checkpoints while anything was
	// written; 0 turns periodic checks off (verify-state still checks).
	Interval Duration `json:"interval"`
	// Entries starts a checkpoint sooner, once this many entries were
	// applied since the last one; 0 checks on Interval alone.
	Entries uint64 `json:"entries"`
}

// DefaultConfig returns a configuration with the default addresses and
// timings and no node id or data dir.
func DefaultConfig() Config {
	return Config{
		RaftAddr:   DefaultRaftAddr,
		GRPCAddr:   DefaultGRPCAddr,
		GossipAddr: DefaultGossipAddr,
		LogLevel:   "info",
		LogFormat:  "text",
		// Workers fence after 30 s + 10 s kill grace by default.
		WorkerLossTimeout: Duration(DefaultWorkerLossTimeout),
		Raft: RaftConfig{
			HeartbeatTimeout:   Duration(500 * time.Millisecond),
			ElectionTimeout:    Duration(500 * time.Millisecond),
			LeaderLeaseTimeout: Duration(250 * time.Millisecond),
			CommitTimeout:      Duration(20 * time.Millisecond),
			MaxAppendEntries:   256,
			SnapshotInterval:   Duration(2 * time.Minute),
			SnapshotThreshold:  8192,
			TrailingLogs:       10240,
			SnapshotsRetained:  2,
			LogStore:           LogStoreBoltDB,
		},
		StateCheck: StateCheckConfig{Interval: Duration(time.Minute), Entries: 50_000},
	}
}

// LoadConfigFile reads a JSON configuration file over base: fields present
// in the file replace base's, the rest keep base's values. Unknown fields
// are an error, so a misspelt setting is not silently ignored.
func LoadConfigFile(path string, base Config) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return base, fmt.Errorf("read config file: %w", err)
	}
	cfg := base
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return base, fmt.Errorf("config file %s: %w (the file is JSON; see 'longfair server --help' for the fields)", path, err)
	}
	if dec.More() {
		return base, fmt.Errorf("config file %s: more than one JSON value; the file must hold one object", path)
	}
	return cfg, nil
}

// Validate checks the configuration and says what to change when it is
// wrong.
func (c Config) Validate() error {
	var errs []error
	if c.NodeID == "" {
		errs = append(errs, errors.New("node id is empty: set --node-id (node_id) to a name unique in the server group"))
	} else if err := core.CheckName("node id", c.NodeID); err != nil {
		errs = append(errs, err)
	}
	if c.DataDir == "" {
		errs = append(errs, errors.New("data dir is empty: set --data-dir (data_dir) to a directory the server may own"))
	}
	for _, a := range []struct{ name, bind, advertise string }{
		{"raft", c.RaftAddr, c.RaftAdvertise},
		{"grpc", c.GRPCAddr, c.GRPCAdvertise},
		{"gossip", c.GossipAddr, c.GossipAdvertise},
	} {
		if err := checkAddrs(a.name, a.bind, a.advertise); err != nil {
			errs = append(errs, err)
		}
	}
	for _, j := range c.Join {
		if _, _, err := net.SplitHostPort(j); err != nil {
			errs = append(errs, fmt.Errorf("join address %q is not host:port: give the gossip address of a running server", j))
		}
	}
	if c.BootstrapExpect < 0 {
		errs = append(errs, fmt.Errorf("bootstrap-expect is %d: give the number of servers to wait for (3 or 5), or 0 to disable", c.BootstrapExpect))
	}
	if c.Bootstrap && c.BootstrapExpect > 0 {
		errs = append(errs, errors.New("both --bootstrap and --bootstrap-expect are set: use --bootstrap for a one-server group or --bootstrap-expect N to wait for N servers, not both"))
	}
	if c.StateCheck.Interval < 0 {
		errs = append(errs, fmt.Errorf("state_check.interval is %v: give how often to compare the replicas' state (for example \"1m\"), or 0 to turn the periodic check off", time.Duration(c.StateCheck.Interval)))
	}
	if c.HTTPAddr != "" {
		if _, port, err := net.SplitHostPort(c.HTTPAddr); err != nil {
			errs = append(errs, fmt.Errorf("http address %q is not host:port (for example 127.0.0.1:7413), or empty to disable it: %v", c.HTTPAddr, err))
		} else if err := checkPort(port); err != nil {
			errs = append(errs, fmt.Errorf("http address %q: %w", c.HTTPAddr, err))
		}
	}
	if _, err := ops.ParseLogLevel(c.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("%w (log_level, --log-level)", err))
	}
	if err := ops.CheckLogFormat(c.LogFormat); err != nil {
		errs = append(errs, fmt.Errorf("%w (log_format, --log-format)", err))
	}
	if err := c.validateSecurity(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Raft.validate(); err != nil {
		errs = append(errs, err)
	}
	if min := minWorkerLossTimeout; time.Duration(c.WorkerLossTimeout) < min {
		errs = append(errs, fmt.Errorf("worker_loss_timeout is %v: give at least %v (a worker fences its tasks at least a second after losing the leader, and the servers wait %v more); the default is %v",
			time.Duration(c.WorkerLossTimeout), min, fenceMargin, DefaultWorkerLossTimeout))
	}
	return errors.Join(errs...)
}

// DefaultWorkerLossTimeout is the default WorkerLossTimeout.
const DefaultWorkerLossTimeout = time.Minute

// fenceMargin is how much earlier than WorkerLossTimeout a worker must
// have fenced its attempts: it covers an old leader still answering
// heartbeats for its lease timeout after the new one took over, the
// kernel's delivery of SIGKILL and the scheduling of the processes
// involved. Clocks are not compared: each side measures its own timeout
// from a moment the other side's follows.
const fenceMargin = time.Second

// minWorkerLossTimeout is the shortest WorkerLossTimeout: the shortest
// fence timeout a worker accepts, plus the margin.
const minWorkerLossTimeout = time.Second + fenceMargin

func (r RaftConfig) validate() error {
	var errs []error
	for _, d := range []struct {
		name string
		v    Duration
	}{
		{"heartbeat_timeout", r.HeartbeatTimeout},
		{"election_timeout", r.ElectionTimeout},
		{"leader_lease_timeout", r.LeaderLeaseTimeout},
		{"commit_timeout", r.CommitTimeout},
		{"snapshot_interval", r.SnapshotInterval},
	} {
		if d.v < Duration(5*time.Millisecond) {
			errs = append(errs, fmt.Errorf("raft %s is %v: it must be at least 5ms", d.name, time.Duration(d.v)))
		}
	}
	if r.LeaderLeaseTimeout > r.HeartbeatTimeout {
		errs = append(errs, fmt.Errorf("raft leader_lease_timeout (%v) exceeds heartbeat_timeout (%v): make the lease at most the heartbeat timeout", time.Duration(r.LeaderLeaseTimeout), time.Duration(r.HeartbeatTimeout)))
	}
	if r.MaxAppendEntries < 1 || r.MaxAppendEntries > 1024 {
		errs = append(errs, fmt.Errorf("raft max_append_entries is %d: use a value from 1 to 1024", r.MaxAppendEntries))
	}
	if r.SnapshotThreshold < 1 {
		errs = append(errs, errors.New("raft snapshot_threshold is 0: use at least 1 (default 8192)"))
	}
	if r.SnapshotsRetained < 1 {
		errs = append(errs, fmt.Errorf("raft snapshots_retained is %d: keep at least 1 snapshot", r.SnapshotsRetained))
	}
	if !slices.Contains(LogStores(), r.LogStore) {
		errs = append(errs, fmt.Errorf("raft log_store is %q: use %q (the default) or %q", r.LogStore, LogStoreBoltDB, LogStoreWAL))
	}
	return errors.Join(errs...)
}

// checkAddrs validates a listen address and its advertise address. An
// unspecified listen host (0.0.0.0, ::) cannot be dialled by peers, so it
// needs an explicit advertise address.
func checkAddrs(name, bind, advertise string) error {
	host, port, err := net.SplitHostPort(bind)
	if err != nil {
		return fmt.Errorf("%s address %q is not host:port (for example 127.0.0.1:7411): %v", name, bind, err)
	}
	if err := checkPort(port); err != nil {
		return fmt.Errorf("%s address %q: %w", name, bind, err)
	}
	if advertise != "" {
		ah, ap, err := net.SplitHostPort(advertise)
		if err != nil {
			return fmt.Errorf("%s advertise address %q is not host:port: %v", name, advertise, err)
		}
		if ip := net.ParseIP(ah); ah == "" || (ip != nil && ip.IsUnspecified()) {
			return fmt.Errorf("%s advertise address %q has no host peers can dial: give this machine's address", name, advertise)
		}
		if err := checkPort(ap); err != nil || ap == "0" {
			return fmt.Errorf("%s advertise address %q needs a fixed port peers can dial", name, advertise)
		}
		return nil
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("%s address %q listens on every interface, which peers cannot dial: set --%s-advertise (%s_advertise) to an address of this machine they can reach", name, bind, name, name)
	}
	return nil
}

func checkPort(port string) error {
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("port %q is not a number from 0 to 65535", port)
	}
	return nil
}

// Duration is a time.Duration written in JSON as a Go duration string
// such as "500ms" or "2m".
type Duration time.Duration

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("durations are strings such as \"500ms\" or \"2m\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w (write it like \"500ms\" or \"2m\")", s, err)
	}
	*d = Duration(v)
	return nil
}

// String formats d like time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }
