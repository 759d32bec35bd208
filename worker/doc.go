// Package worker is longfair's worker agent: the process that runs on each
// compute node (CPU, GPU or MIC) and runs the tasks the cluster places
// there.
//
// An Agent
//
//   - joins the servers' memberlist gossip pool (optionally encrypted with a
//     shared key), advertising its node id, its resources (cpu cores and mem
//     bytes detected from the machine unless given, mic devices, any named
//     resource), its node class and the account that contributed it, and the
//     address of its TaskOutput gRPC service;
//   - keeps one gRPC stream open to the Raft leader (Workers.Connect),
//     finding the leader through any server it knows from gossip, and
//     reconnecting to the new leader when the old one goes away; the
//     leader refuses it (ALREADY_EXISTS) while another worker process —
//     another session id, made at start — holds a live stream as the same
//     node, and it then retries slowly and leaves gossip without a leave
//     message, which would take the other worker's node down;
//   - runs each assignment the leader sends — only attempts the cluster has
//     committed — as /bin/sh -c COMMAND in its own process group and its own
//     working directory, with stdout and stderr in per-attempt files, the
//     devices it was given (GPUs in CUDA_VISIBLE_DEVICES, MICs in
//     OFFLOAD_DEVICES: devices.go), and its walltime enforced
//     (SIGTERM, then SIGKILL after a grace period), under a supervisor
//     process (below); an assignment the leader marks queued (its
//     look-ahead queue: package fsm, lookahead.go) waits, in the order they
//     came, until the attempts running here leave room for it, and starts
//     then without a word from the leader (slots.go);
//   - when it runs as root with RunAsUsers ('longfair worker' without
//     --as-self), runs each attempt as its user's Unix account — uid, gid,
//     supplementary groups, HOME, USER and LOGNAME, looked up on this node —
//     in the job's directory with the environment the job captured, and
//     refuses (exit 126, the reason in its stderr) a user without an
//     account here or that is root (identity.go); otherwise it runs them
//     as itself and says so once;
//   - reports each attempt's start and exit (code and runtime, measured
//     here) on the stream, and keeps reporting an event until the leader
//     acknowledges it has been committed;
//   - serves the attempts' output (`longfair logs`) to callers whose token
//     the servers let read the job, asking them on each new caller and job
//     (caller_auth.go: the worker keeps no tokens or rules of its own), and
//     removes it, with what tasks left in their working directories, once
//     the attempt is over and the output retention has passed (a week by
//     default).
//
// Exactly once. Attempts are named by (job, task, attempt). The agent never
// starts an attempt twice; when it reconnects it tells the leader every
// attempt it holds and every unacknowledged event, and the leader
// reconciles: attempts the ledger thinks run here but the agent does not
// know are marked lost, attempts the agent runs that the ledger does not
// know (a partitioned worker whose node was declared down) are killed
// without a report. The ledger ignores reports about attempts that are no
// longer active, so nothing is charged twice.
//
// Fencing. A task must never run at the same time as its rerun elsewhere,
// and a worker that is stopped (SIGSTOP), hung, cut off or killed cannot
// be relied on to kill it. So the attempts run under a supervisor: the
// worker's program started again (supervise.go; programs that run an
// Agent call Supervise first in main), once for the agent rather than
// once per attempt, which starts each task's process group, enforces its
// walltime, measures its runtime and holds a lease on the monotonic clock
// for all of them. The agent numbers its heartbeats and the leader echoes
// each; an echo proves the leader heard the worker after that heartbeat
// was sent, and renews the lease to that send time plus FenceTimeout.
// When the lease runs out, or the agent's end of the control pipe closes
// (it died), the supervisor kills every task's group (SIGTERM, then
// SIGKILL after KillGrace); once they are dead it ends when the agent is
// gone, or goes on for the attempts the agent sends after it renewed the
// lease. The agent reports a fenced attempt lost with the runtime it had,
// which the ledger charges if it still holds the attempt, and ignores
// otherwise. A supervisor that dies takes its tasks with it (their
// shells have a parent-death signal); the agent reports them ended and
// starts another for the next attempt. Each supervisor holds a lock file
// (supervisors/ in the work dir) for its life, so that a worker restarted
// after a crash waits, before its first hello, until its predecessor's
// supervisor has killed its tasks and ended. The leader reruns the
// attempts of a silent worker only WorkerLossTimeout after it last heard
// it, and refuses a worker whose FenceTimeout plus KillGrace (sent in its
// hello) is not at least a second shorter (package server: the
// timeline). The default fence timeout, 30 s, is far above a leader
// failover: a worker went 1.3 s without an answered heartbeat when its
// leader was killed, 2.1 s when it was stopped (SIGSTOP), on the default
// Raft timings.
//
// Containment (cgroup.go, cgroup_linux.go). A worker confines each
// attempt to its own cgroup, /longfair/NODE/JOB.TASK.ATTEMPT from the
// root of every hierarchy (cgroup v2, or the v1 cpu, cpuacct, memory,
// pids and freezer controllers where only v1 is mounted; the library is
// containerd's cgroups). Its limits come from the attempt's demand: a CFS
// quota of cpu cores, a hard limit of mem bytes (an OOM kill is reported),
// and Config.PidsLimit processes. The supervisor creates the cgroup,
// starts the shell, moves it in and only then lets it run the script
// (gatedShell), so every process of the task is in it; every signal to
// the task's group goes to the cgroup too, and when the shell exits, for
// whatever reason, the supervisor kills everything left in it (freezing
// it on v1, cgroup.kill on v2), reads what the attempt used (CPU seconds,
// peak memory, an OOM kill) for its end event (usage.go), and removes
// it. A supervisor killed itself cannot: the agent removes its cgroup
// when it sees it die, and an agent that starts kills and removes every
// cgroup under its node's before its first hello (reapCgroups), as it
// owns none yet. A worker that is not root or finds no usable controllers
// refuses to start unless it is Unconfined (--unconfined: laptops,
// `longfair dev`, test clusters); it advertises which it is
// (WorkerAdvert.confinement, shown by `longfair nodes`). The node's GPUs
// and MICs (/dev/nvidiaN, /dev/micN, or Config.DeviceFiles) that an
// attempt was not given are denied in its cgroup: it can open only its
// own, whatever it does with CUDA_VISIBLE_DEVICES (v1's devices
// controller; on v2 the library's eBPF device filter, untested here as
// this machine's v2 hierarchy has no controllers).
//
// The agent reads the clock (runtimes are measured by the supervisor)
// and never touches the ledger itself.
package worker
