package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Parallel tasks. Every node of a parallel task (an MPI run) is sent the
// task's assignment with the node list and its own place in it. The head
// (node_index 0) runs the command as any task, with the variables below;
// every other node — a member — holds its share of the allocation with a
// placeholder process that only waits (memberScript) under the same
// supervisor, lease and fence as a task, and runs what `longfair exec`
// starts there (exec_service.go) in that process's group, so whatever
// ends the task's part on the node (the leader's kill when the head
// exits or a node is lost, the walltime, the fence) ends those processes
// too. A member reports nothing but its loss: the task's start and end
// are the head's to report.

// Environment variables of a parallel task, beside those every task gets.
const (
	// EnvNodeList lists the task's nodes, the head first, comma separated.
	EnvNodeList = "LONGFAIR_NODELIST"
	// EnvNNodes is how many nodes the task spans; EnvNTasks how many
	// processes it runs (one per node unless the job says --ntasks), and
	// EnvNTasksPerNode how many of them on each node, at most.
	EnvNNodes        = "LONGFAIR_NNODES"
	EnvNTasks        = "LONGFAIR_NTASKS"
	EnvNTasksPerNode = "LONGFAIR_NTASKS_PER_NODE"
	// EnvNodeIndex is this node's place in the node list (0: the head).
	EnvNodeIndex = "LONGFAIR_NODEID"
	// EnvHostfile is a file naming the task's nodes one per line, in the
	// form MPICH's and Open MPI's launchers read (-f, --hostfile).
	EnvHostfile = "LONGFAIR_HOSTFILE"
	// EnvRsh is an rsh-style agent that starts a command on another node
	// of the task: RSH NODE COMMAND... (`longfair exec`), for
	// `mpiexec -launcher rsh -launcher-exec $LONGFAIR_RSH` (MPICH) or
	// `mpirun --mca plm_rsh_agent $LONGFAIR_RSH` (Open MPI).
	EnvRsh = "LONGFAIR_RSH"
	// EnvCredential is the task's secret that `longfair exec` shows the
	// other nodes' workers; EnvNodeAddresses where they listen
	// (NODE=ADDRESS,...).
	EnvCredential    = "LONGFAIR_JOB_CREDENTIAL"
	EnvNodeAddresses = "LONGFAIR_NODE_ADDRESSES"
	// EnvExecNode names the node a process `longfair exec` started runs
	// on (exec_service.go).
	EnvExecNode = "LONGFAIR_EXEC_NODE"
)

// parallelEnv are the variables of a parallel task.
var parallelEnv = []string{EnvNodeList, EnvNNodes, EnvNTasks, EnvNTasksPerNode, EnvNodeIndex, EnvHostfile, EnvRsh, EnvCredential, EnvNodeAddresses, EnvExecNode}

// isMember reports whether asg is a node of a parallel task that this
// node does not head.
func isMember(asg *longfairv1.Assignment) bool { return asg.GetNodeIndex() > 0 }

// memberScript is what a member node runs for the task: it holds the
// node's share until it is stopped. It execs, so the supervisor's
// process group leader is the waiting process itself. It ignores (and
// sleep inherits that) the signals a user may send a job that do not end
// it (SignalJob), so that they reach what `longfair exec` started on the
// node without ending the node's share; TERM and KILL still end it.
const memberScript = "trap '' HUP INT QUIT USR1 USR2 ALRM; exec sleep infinity"

// allocationEnv writes attempt k's hostfile and rsh agent into dir (the
// attempt's output directory, which its user may read, never the job's
// own directory, which other tasks share) and returns the parallel task's
// variables; nil for a one-node task.
func (ag *Agent) allocationEnv(asg *longfairv1.Assignment, dir string, k attemptKey) ([]string, error) {
	nodes := asg.GetNodes()
	if len(nodes) < 2 {
		return nil, nil
	}
	prefix := filepath.Join(dir, strconv.FormatInt(k.task, 10)+"."+strconv.Itoa(int(k.attempt)))
	hostfile := prefix + ".hostfile"
	if err := os.WriteFile(hostfile, []byte(strings.Join(nodes, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("write the task's hostfile: %w", err)
	}
	rsh := prefix + ".rsh"
	script := "#!/bin/sh\nexec " + shellQuote(ag.clientExe) + " exec \"$@\"\n"
	if err := os.WriteFile(rsh, []byte(script), 0o755); err != nil {
		return nil, fmt.Errorf("write the task's rsh agent: %w", err)
	}
	ranks := int(asg.GetNtasks())
	if ranks <= 0 {
		ranks = len(nodes)
	}
	addrs := asg.GetNodeAddresses()
	names := make([]string, 0, len(addrs))
	for n := range addrs {
		names = append(names, n)
	}
	sort.Strings(names)
	pairs := make([]string, len(names))
	for i, n := range names {
		pairs[i] = n + "=" + addrs[n]
	}
	return []string{
		EnvNodeList + "=" + strings.Join(nodes, ","),
		EnvNNodes + "=" + strconv.Itoa(len(nodes)),
		EnvNTasks + "=" + strconv.Itoa(ranks),
		EnvNTasksPerNode + "=" + strconv.Itoa((ranks+len(nodes)-1)/len(nodes)),
		EnvNodeIndex + "=" + strconv.Itoa(int(asg.GetNodeIndex())),
		EnvHostfile + "=" + hostfile,
		EnvRsh + "=" + rsh,
		EnvCredential + "=" + asg.GetCredential(),
		EnvNodeAddresses + "=" + strings.Join(pairs, ","),
	}, nil
}
