package worker

import (
	"slices"
	"testing"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Every task gets Slurm's names for its job, task, account, user, nodes,
// processes, cores and memory, so scripts written for sbatch find them.
func TestSlurmEnv(t *testing.T) {
	ag := &Agent{cfg: Config{NodeID: "c01"}}
	a := &attempt{key: attemptKey{job: 12, task: 3, attempt: 2}, asg: &longfairv1.Assignment{
		JobName: "sweep", Account: "phys", User: "ann", Dir: "/home/ann/run",
		Demand: map[string]float64{"cpu": 1.5, "mem": 2 << 30},
	}}
	env := ag.slurmEnv(a)
	for _, want := range []string{"SLURM_JOB_ID=12", "SLURM_ARRAY_JOB_ID=12", "SLURM_ARRAY_TASK_ID=3", "SLURM_JOB_NAME=sweep",
		"SLURM_JOB_ACCOUNT=phys", "SLURM_JOB_USER=ann", "SLURM_JOB_NODELIST=c01", "SLURM_NNODES=1", "SLURM_NTASKS=1",
		"SLURM_RESTART_COUNT=1", "SLURM_SUBMIT_DIR=/home/ann/run", "SLURM_CPUS_ON_NODE=2", "SLURM_MEM_PER_NODE=2048",
		"SLURMD_NODENAME=c01", "SLURM_NODEID=0", "SLURM_JOB_NUM_NODES=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the task's Slurm variables lack %s: %v", want, env)
		}
	}
	a.asg.Nodes, a.asg.Ntasks = []string{"c01", "c02"}, 8
	env = ag.slurmEnv(a)
	if !slices.Contains(env, "SLURM_JOB_NODELIST=c01,c02") || !slices.Contains(env, "SLURM_NNODES=2") || !slices.Contains(env, "SLURM_NTASKS=8") {
		t.Errorf("a parallel task's Slurm variables: %v", env)
	}
}
