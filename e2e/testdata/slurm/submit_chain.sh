#!/bin/bash
# A pipeline submitted by a driver script, as
# https://hpc-unibe-ch.github.io/runjobs/scheduled-jobs/dependencies and
# https://docs.gwdg.de/doku.php?id=en:services:application_services:high_performance_computing:running_jobs_slurm:dependencies
# show: each sbatch --parsable gives the id the next job names in
# --dependency=afterok:ID. Run with `sbatch` on PATH.
jid_pre=$(sbatch --parsable job_prep.sh) || exit 1
jid_w01=$(sbatch --parsable --dependency=afterok:${jid_pre} job01.sh) || exit 1
sbatch --dependency=afterok:${jid_w01} job_coll.sh || exit 1
echo "prep=$jid_pre work=$jid_w01"
