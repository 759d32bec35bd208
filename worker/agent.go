package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Agent is a running worker. Create it with New, run it with Start and
// stop it with Shutdown.
type Agent struct {
	cfg     Config
	log     *slog.Logger
	advert  *longfairv1.WorkerAdvert
	session string
	baseEnv []string
	// asRoot: tasks run as their users' Unix accounts (identity.go).
	asRoot bool

	// devs hands out each device class's indices, and deviceFiles names
	// their device files (devices.go).
	devs        [len(deviceClasses)]*devices
	deviceFiles [len(deviceClasses)][]string
	tasks       *table
	// slots is what running attempts hold, and the look-ahead queue.
	slots *slots

	gossip   *gossip
	grpc     *grpc.Server
	grpcLis  net.Listener
	leaders  *leaderFinder
	goodbyes chan goodbye

	// fresh is set until a leader has welcomed this process: until then
	// it knows nothing of attempts a predecessor on this node may have run.
	fresh     atomic.Bool
	connected atomic.Bool
	leaderID  atomic.Value // string
	// refusedAsDuplicate is set while the leader refuses this process
	// because another worker holds its node id; it then leaves the gossip
	// pool without saying so, since the pool knows that name as the
	// other worker's, and a leave would take the other's node down.
	refusedAsDuplicate atomic.Bool
	// lease is when the attempts' supervisors fence them unless it is
	// renewed (monoNow): FenceTimeout after the last moment the leader
	// surely heard this worker (renewLease).
	lease atomic.Int64
	// exe is the program the task supervisor runs as
	// (Config.Executable); clientExe the longfair program a parallel
	// task's rsh agent runs (Config.ClientExecutable).
	exe, clientExe string
	// supervisors starts the attempts, each under the agent's task
	// supervisor process (supervise.go).
	supervisors *supervisors
	// cgroupVersion is the cgroup version the attempts run under (1 or
	// 2), or 0 on an unconfined worker (cgroup.go).
	cgroupVersion int

	// runCtx lives until Shutdown; attempts and loops stop with it.
	runCtx    context.Context
	cancelRun context.CancelFunc
	wg        sync.WaitGroup // attempts
	loops     sync.WaitGroup // connect loop, join loop, gRPC
	started   bool
	stopOnce  sync.Once
	stopErr   error
}

// goodbye asks the current session to tell the leader this worker leaves;
// done is closed once it was sent.
type goodbye struct {
	reason string
	done   chan struct{}
}

// New checks the configuration, fills in the detected resources and
// creates the work dir. Nothing listens until Start.
func New(cfg Config, logger *slog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid worker configuration: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("node_id", cfg.NodeID)
	cfg.Resources = withDetected(cfg.Resources)
	if err := os.MkdirAll(filepath.Join(cfg.WorkDir, supervisorsDir), 0o700); err != nil {
		return nil, fmt.Errorf("create work dir: %w", err)
	}
	var sid [8]byte
	if _, err := rand.Read(sid[:]); err != nil {
		return nil, fmt.Errorf("make a session id: %w", err)
	}
	var err error
	ag := &Agent{
		cfg: cfg, log: logger, session: hex.EncodeToString(sid[:]),
		baseEnv:  taskEnv(os.Environ()),
		tasks:    newTable(),
		slots:    newSlots(maps.Clone(cfg.Resources)),
		goodbyes: make(chan goodbye),
	}
	for i, c := range deviceClasses {
		ag.devs[i] = newDevices(int(cfg.Resources[c.resource]))
	}
	ag.deviceFiles = deviceFiles(&cfg)
	ag.exe = cfg.Executable
	if ag.exe == "" {
		if ag.exe, err = selfExe(); err != nil {
			return nil, fmt.Errorf("find this program to run task supervisors: %w (set the worker's Executable)", err)
		}
	}
	ag.supervisors = newSupervisors(ag.exe, filepath.Join(cfg.WorkDir, supervisorsDir), ag.lease.Load)
	ag.clientExe = cfg.ClientExecutable
	if ag.clientExe == "" {
		// The real path, not /proc/self/exe: the task's agent script runs
		// it as another process.
		if ag.clientExe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find this program for parallel tasks' rsh agent: %w (set the worker's ClientExecutable)", err)
		}
	}
	ag.asRoot = cfg.RunAsUsers && os.Geteuid() == 0
	switch {
	case cfg.RunAsUsers && !ag.asRoot:
		logger.Warn("this worker is not root: tasks run as its own user, not as theirs", "uid", os.Geteuid())
	case !cfg.RunAsUsers:
		logger.Info("tasks run as this worker's own user (running as users is off)", "uid", os.Geteuid())
	}
	if !cfg.Unconfined && !cfg.Simulate {
		if ag.cgroupVersion, err = detectCgroups(cgroupParent(cfg.NodeID)); err != nil {
			return nil, errUnconfined(err)
		}
	}
	ag.fresh.Store(true)
	ag.leaderID.Store("")
	ag.advert = &longfairv1.WorkerAdvert{
		Version: advertVersion, Role: RoleWorker, NodeId: cfg.NodeID,
		Resources: maps.Clone(cfg.Resources), NodeClass: cfg.Class, Account: cfg.Account,
		Confinement: confinementName(ag.cgroupVersion),
	}
	return ag, nil
}

// Start opens the TaskOutput listener, joins the gossip pool in the
// background and starts looking for the leader. ctx bounds the start-up
// only; the agent runs until Shutdown.
func (ag *Agent) Start(ctx context.Context) (err error) {
	if ag.started {
		return errors.New("worker already started")
	}
	ag.started = true
	if err := ctx.Err(); err != nil {
		return err
	}
	ag.runCtx, ag.cancelRun = context.WithCancel(context.Background())
	defer func() {
		if err != nil {
			ag.Shutdown(context.Background())
		}
	}()
	if ag.grpcLis, err = net.Listen("tcp", ag.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("listen for gRPC on %s: %w (is the port in use? pick another with --grpc-addr)", ag.cfg.GRPCAddr, err)
	}
	ag.advert.Address = ag.cfg.GRPCAdvertise
	if ag.advert.Address == "" {
		ag.advert.Address = ag.grpcLis.Addr().String()
	}
	dialOpts, err := ag.cfg.dialOptions()
	if err != nil {
		return err
	}
	checkDialOpts, err := ag.cfg.transportDialOptions()
	if err != nil {
		return err
	}
	if ag.gossip, err = startGossip(ag.cfg, ag.advert, ag.log); err != nil {
		return err
	}
	ag.leaders = newLeaderFinder(ag.gossip, ag.log)
	ag.leaders.dial = dialOpts
	ag.leaders.checkDial = checkDialOpts
	serverOpts, err := ag.cfg.serverOptions(newCallerAuth(ag.leaders, ag.log))
	if err != nil {
		return err
	}
	ag.grpc = grpc.NewServer(append(serverOpts, longfairv1.ServerOptions()...)...)
	longfairv1.RegisterTaskOutputServer(ag.grpc, &outputService{ag: ag})
	longfairv1.RegisterAllocationServer(ag.grpc, &allocationService{ag: ag})
	ag.goLoop(func() {
		if err := ag.grpc.Serve(ag.grpcLis); err != nil {
			ag.log.Error("gRPC server stopped", "error", err)
		}
	})
	ag.goLoop(func() { ag.gossip.joinLoop(ag.runCtx, ag.cfg.Join) })
	ag.goLoop(func() {
		// Supervisors get EOF at once when their agent dies, then give
		// their tasks the kill grace.
		ag.reapCgroups()
		ag.waitOldSupervisors(ag.runCtx, ag.cfg.KillGrace+5*time.Second)
		ag.connectLoop(ag.runCtx)
	})
	ag.goLoop(func() { ag.pruneLoop(ag.runCtx) })
	ag.log.Info("worker started", "gossip", ag.GossipAddr(), "grpc", ag.GRPCAddr(),
		"resources", ag.cfg.Resources, "confinement", confinementName(ag.cgroupVersion), "class", ag.cfg.Class, "account", ag.cfg.Account, "work_dir", ag.cfg.WorkDir)
	return nil
}

func (ag *Agent) goLoop(f func()) {
	ag.loops.Add(1)
	go func() {
		defer ag.loops.Done()
		f()
	}()
}

// Shutdown stops the worker on purpose: it takes no more assignments,
// stops its running tasks (SIGTERM, then SIGKILL after the kill grace)
// without reporting their ends, waits until the leader has acknowledged
// the events it still holds, tells the leader it leaves once its tasks
// have ended (so its node is marked down at once and its attempts are
// requeued), and leaves the gossip pool. ctx bounds the waiting. Calling it again returns the first
// result.
func (ag *Agent) Shutdown(ctx context.Context) error {
	ag.stopOnce.Do(func() { ag.stopErr = ag.shutdown(ctx) })
	return ag.stopErr
}

func (ag *Agent) shutdown(ctx context.Context) error {
	var errs []error
	ag.tasks.mu.Lock()
	ag.tasks.closed = true
	ag.tasks.mu.Unlock()
	if ag.runCtx != nil {
		for _, a := range ag.tasks.running() {
			ag.stop([]*longfairv1.AttemptRef{a.key.ref()}, false, ag.cfg.KillGrace, "the worker is shutting down")
		}
		stopped := waitGroup(ctx, &ag.wg)
		if !stopped {
			errs = append(errs, errors.New("tasks were still running when the shutdown deadline passed"))
		}
		ag.flush(ctx)
		// A goodbye has the leader rerun this node's tasks at once, so it
		// is said only when they are over; otherwise the leader waits its
		// loss timeout, by when their supervisors have fenced them (this
		// process going away closes their pipes).
		if stopped {
			ag.sayGoodbye(ctx, "the worker is shutting down")
			if ag.cgroupVersion != 0 {
				// Its tasks' cgroups are gone with them.
				removeEmptyCgroup(ag.cgroupVersion, cgroupParent(ag.cfg.NodeID))
			}
		}
		ag.cancelRun()
	}
	// The supervisor fences what may still run, and ends.
	ag.supervisors.close()
	if ag.gossip != nil {
		if err := ag.gossip.leave(time.Second, !ag.refusedAsDuplicate.Load()); err != nil {
			ag.log.Warn("leaving gossip pool", "error", err)
		}
	}
	if ag.grpc != nil {
		ag.grpc.Stop()
	} else if ag.grpcLis != nil {
		ag.grpcLis.Close()
	}
	ag.loops.Wait()
	if ag.leaders != nil {
		ag.leaders.close()
	}
	ag.log.Info("worker stopped")
	return errors.Join(errs...)
}

// renewLease extends the attempts' lease to FenceTimeout after anchor
// (monoNow), the moment this worker sent a message the leader has since
// answered: the leader heard the worker after anchor, so it counts its
// own loss timeout from a later moment (server/leader_nodes.go), and the
// lease always runs out first. heartbeat is the stream's interval: a
// renewal more than two of them after the last is logged.
func (ag *Agent) renewLease(anchor int64, heartbeat time.Duration) {
	deadline := anchor + int64(ag.cfg.FenceTimeout)
	var cur int64
	for {
		cur = ag.lease.Load()
		if deadline <= cur {
			return
		}
		if ag.lease.CompareAndSwap(cur, deadline) {
			break
		}
	}
	// How close a leader change or a network problem came to fencing the
	// tasks: what an operator needs to set the fence timeout.
	if cur > 0 {
		if gap := time.Duration(monoNow() - (cur - int64(ag.cfg.FenceTimeout))); gap > 2*heartbeat {
			ag.log.Info("in contact with the leader again", "without_contact", gap.Round(time.Millisecond), "fence_timeout", ag.cfg.FenceTimeout)
		}
	}
	ag.supervisors.renew(deadline)
}

// flush waits until the leader has acknowledged every event, while the
// stream is up, or ctx ends.
func (ag *Agent) flush(ctx context.Context) {
	for ag.tasks.pendingEvents() > 0 && ag.connected.Load() {
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sayGoodbye has the current session send a goodbye, if there is one.
func (ag *Agent) sayGoodbye(ctx context.Context, reason string) {
	if !ag.connected.Load() {
		return
	}
	g := goodbye{reason: reason, done: make(chan struct{})}
	select {
	case ag.goodbyes <- g:
	case <-ctx.Done():
		return
	case <-time.After(2 * time.Second):
		return
	}
	select {
	case <-g.done:
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
}

// waitGroup waits for wg or ctx; it reports whether wg finished.
func waitGroup(ctx context.Context, wg *sync.WaitGroup) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// NodeID is the worker's node id.
func (ag *Agent) NodeID() string { return ag.cfg.NodeID }

// GossipAddr is the address of the worker's gossip member.
func (ag *Agent) GossipAddr() string { return ag.gossip.Addr() }

// GRPCAddr is the address of the worker's TaskOutput service.
func (ag *Agent) GRPCAddr() string { return ag.advert.GetAddress() }

// Resources is the capacity the worker advertises.
func (ag *Agent) Resources() map[string]float64 { return maps.Clone(ag.cfg.Resources) }

// Connected reports whether the worker has a stream to a leader that has
// welcomed it.
func (ag *Agent) Connected() bool { return ag.connected.Load() }

// Leader is the node id of the leader the worker is connected to, or "".
func (ag *Agent) Leader() string { return ag.leaderID.Load().(string) }

// Running is how many attempts are running here, or about to start (a
// MIC task waiting for its devices); Queued how many wait in the node's
// look-ahead queue for a slot.
func (ag *Agent) Running() int { n, _ := ag.tasks.counts(); return n }

func (ag *Agent) Queued() int { _, n := ag.tasks.counts(); return n }
