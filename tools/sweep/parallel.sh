#!/bin/sh
# tools/sweep/parallel.sh PLAN [DIR] [PARALLEL_OPTION]...: every job of a
# sweep plan with GNU parallel (Debian's "parallel"), on this machine or,
# with --sshloginfile FILE, over ssh (thpsim, the plan and the traces at
# the same paths there, DIR shared).  Each job is "thpsim sweep run PLAN
# -o DIR" with $PARALLEL_SEQ as its index, the command line every engine
# runs.  THPSIM names the thpsim to run (default: thpsim on PATH).
# A job that fails does not stop the others; rerun the missing ones with
# "thpsim sweep run PLAN --missing" or this script again (a job run twice
# writes the same result).
set -eu
plan=${1:?usage: parallel.sh PLAN [DIR] [PARALLEL_OPTION]...}
shift
dir=$plan.results
case "${1:-}" in -*|'') ;; *) dir=$1; shift ;; esac
thpsim=${THPSIM:-thpsim}
n=$(grep -c . "$plan")
[ "$n" -gt 0 ] || { echo "parallel.sh: $plan has no job" >&2; exit 2; }
mkdir -p "$dir"
seq "$n" | parallel --will-cite --halt never -n0 "$@" "$thpsim" sweep run "$plan" -o "$dir"
