#!/bin/bash
# One process of 4 threads with 2 GB per core, as the per-core memory
# request of https://slurm.schedmd.com/sbatch.html (--mem-per-cpu) and
# https://slurm-docs.hpc.qmul.ac.uk/using/submittingjobs/memory describe:
# the job's memory is --mem-per-cpu × the cores it is given, and the
# script finds the request in SLURM_MEM_PER_CPU (MB) and its cores in
# SLURM_CPUS_PER_TASK, as sbatch.html's OUTPUT ENVIRONMENT VARIABLES say
# (which set the SLURM_ARRAY_* ones only for a job array: this is none).
#SBATCH --job-name=mem-per-cpu
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --mem-per-cpu=2G
#SBATCH --time=00:10:00

export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK
echo "OMP_NUM_THREADS=$OMP_NUM_THREADS"
echo "SLURM_CPUS_PER_TASK=$SLURM_CPUS_PER_TASK"
echo "SLURM_MEM_PER_CPU=$SLURM_MEM_PER_CPU"
echo "SLURM_JOB_ID=$SLURM_JOB_ID"
echo "SLURM_ARRAY_JOB_ID=$SLURM_ARRAY_JOB_ID"
echo "SLURM_ARRAY_TASK_ID=$SLURM_ARRAY_TASK_ID"
