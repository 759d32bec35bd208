package worker

import (
	"strconv"
	"strings"
)

// slurmEnvNames are the Slurm variables every task gets beside the
// LONGFAIR_* ones, so that scripts written for sbatch find what they
// read. The array's size is not in an assignment, so the
// SLURM_ARRAY_TASK_COUNT/MIN/MAX family is not set yet.
var slurmEnvNames = []string{"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_NAME",
	"SLURM_JOB_ACCOUNT", "SLURM_JOB_USER", "SLURM_SUBMIT_DIR", "SLURM_JOB_NODELIST", "SLURM_NNODES", "SLURM_NTASKS",
	"SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE", "SLURM_RESTART_COUNT",
	"SLURM_JOB_NUM_NODES", "SLURMD_NODENAME", "SLURM_NODEID",
	"SLURM_PROCID", "SLURM_LOCALID", "SLURM_CLUSTER_NAME"}

// slurmEnv is the Slurm names of an attempt's variables.
func (ag *Agent) slurmEnv(a *attempt) []string {
	k, asg := a.key, a.asg
	nodes := asg.GetNodes()
	if len(nodes) == 0 {
		nodes = []string{ag.cfg.NodeID}
	}
	ntasks := int(asg.GetNtasks())
	if ntasks <= 0 {
		ntasks = len(nodes)
	}
	env := []string{
		"SLURM_JOB_ID=" + strconv.FormatUint(k.job, 10),
		"SLURM_ARRAY_JOB_ID=" + strconv.FormatUint(k.job, 10),
		"SLURM_ARRAY_TASK_ID=" + strconv.FormatInt(k.task, 10),
		"SLURM_JOB_NAME=" + asg.GetJobName(),
		"SLURM_JOB_ACCOUNT=" + asg.GetAccount(),
		"SLURM_JOB_USER=" + asg.GetUser(),
		"SLURM_JOB_NODELIST=" + strings.Join(nodes, ","),
		"SLURM_NNODES=" + strconv.Itoa(len(nodes)),
		"SLURM_NTASKS=" + strconv.Itoa(ntasks),
		"SLURM_RESTART_COUNT=" + strconv.Itoa(max(int(k.attempt)-1, 0)),
		// Not the older SLURM_JOBID, SLURM_NODELIST and SLURM_NPROCS:
		// with them Open MPI takes the task for a Slurm allocation and
		// looks for srun (e2e/TestMPIHelloSpansTwoNodes failed so).
		"SLURM_JOB_NUM_NODES=" + strconv.Itoa(len(nodes)),
		// This node, and the script as the first process on it.
		"SLURMD_NODENAME=" + ag.cfg.NodeID,
		"SLURM_NODEID=" + strconv.Itoa(int(asg.GetNodeIndex())),
		"SLURM_PROCID=0", "SLURM_LOCALID=0",
		"SLURM_CLUSTER_NAME=longfair",
	}
	if d := asg.GetDir(); d != "" {
		env = append(env, "SLURM_SUBMIT_DIR="+d)
	}
	if c, ok := asg.GetDemand()[ResourceCPU]; ok {
		env = append(env, "SLURM_CPUS_ON_NODE="+strconv.Itoa(int(c+0.999)))
	}
	if m, ok := asg.GetDemand()[ResourceMem]; ok {
		env = append(env, "SLURM_MEM_PER_NODE="+strconv.FormatInt(int64(m)>>20, 10)) // MiB, as Slurm
	}
	return env
}
