#!/bin/bash
# A job array of 16 tasks run at most 4 at a time, one file per task named
# by the array job and its index. The directives are those of the array
# examples of https://docs.lumi-supercomputer.eu/computing/jobs/throughput/
# (--output/--error array_%A_%a, --time, --ntasks, --mem) with the throttle
# of https://slurm.schedmd.com/job_array.html ("--array=0-15%4"); the body
# prints what job_array.html says each task sees. Nothing here is written
# for longfair: e2e/slurm_docs_test.go submits it with `sbatch` as is.
#SBATCH --array=0-15%4
#SBATCH --output=array_%A_%a.out
#SBATCH --error=array_%A_%a.err
#SBATCH --time=01:00:00
#SBATCH --ntasks=1
#SBATCH --mem=4G

echo "started $(date +%s.%N)"
echo "SLURM_JOB_ID=$SLURM_JOB_ID"
echo "SLURM_ARRAY_JOB_ID=$SLURM_ARRAY_JOB_ID"
echo "SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID"
echo "SLURM_ARRAY_TASK_COUNT=$SLURM_ARRAY_TASK_COUNT"
echo "SLURM_ARRAY_TASK_MIN=$SLURM_ARRAY_TASK_MIN"
echo "SLURM_ARRAY_TASK_MAX=$SLURM_ARRAY_TASK_MAX"
echo "to stderr" >&2
sleep 1
echo "ended $(date +%s.%N)"
