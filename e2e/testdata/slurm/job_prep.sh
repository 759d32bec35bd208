#!/bin/bash
# The chain's first job (submit_chain.sh): prepares the input.
#SBATCH --job-name=prep
#SBATCH --time=00:05:00
#SBATCH --ntasks=1
echo "prep started $(date +%s.%N)"
sleep 2
echo "input of job $SLURM_JOB_ID" > input.txt
echo "prep ended $(date +%s.%N)"
