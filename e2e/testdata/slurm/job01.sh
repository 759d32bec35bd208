#!/bin/bash
# The chain's second job (submit_chain.sh): runs on the prepared input.
#SBATCH --job-name=work
#SBATCH --time=00:05:00
#SBATCH --ntasks=1
echo "work started $(date +%s.%N)"
cat input.txt || exit 1
sleep 1
echo "result of job $SLURM_JOB_ID" > result.txt
echo "work ended $(date +%s.%N)"
