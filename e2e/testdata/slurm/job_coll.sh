#!/bin/bash
# The chain's last job (submit_chain.sh): collects the result.
#SBATCH --job-name=collect
#SBATCH --time=00:05:00
#SBATCH --ntasks=1
echo "collect started $(date +%s.%N)"
cat result.txt || exit 1
