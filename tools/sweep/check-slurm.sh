#!/usr/bin/env bash
# tools/sweep/check-slurm.sh THPSIM PROGS: make check-slurm (docs/sweep.md).
#
# The sweep of tools/sweep/check.sh run as a Slurm job array on a
# single-node cluster started here (tools/sweep/slurm-local.sh: munged,
# slurmctld and slurmd as local daemons, stopped at the end), and with GNU
# parallel: the two merged reports must be the same, byte for byte, and
# equal "thpsim compare" on each trace.  Skips, saying why, without Debian's
# slurm-wlm and munge, GNU parallel, root, or a working thpsim record.
# Ends with "slurm: N passed, N failed, N skipped".
set -u
thpsim=$(readlink -f "${1:?usage: check-slurm.sh THPSIM PROGS}")
progs=$(readlink -f "${2:?usage: check-slurm.sh THPSIM PROGS}")
here=$(dirname "$(readlink -f "$0")")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/thpsim-slurm-XXXXXX")
pass=0 fail=0 skip=0
cleanup() { "$here/slurm-local.sh" stop "$tmp/slurm" >/dev/null 2>&1; rm -rf "$tmp"; }
trap cleanup EXIT
ok() { echo "ok   $1"; pass=$((pass + 1)); }
no() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
finish() { echo "slurm: $pass passed, $fail failed, $skip skipped"; exit $((fail ? 1 : 0)); }
skipping() { echo "skip: $1"; skip=1; finish; }

for c in slurmctld slurmd sbatch sinfo munged parallel; do
	command -v $c >/dev/null || skipping "$c is missing (Debian's slurm-wlm, munge and parallel)"
done
[ "$(id -u)" = 0 ] || skipping "a local Slurm cluster needs root"
cd "$tmp" || exit 2
why=$("$here/record-progs.sh" "$thpsim" "$progs" traces) || skipping "$why"
printf 'churn.trace 40\n' > weights
"$thpsim" sweep plan traces --kernel 6.12 --kernel 6.18 --layouts 2 --weights weights \
	-o plan.jsonl 2> /dev/null
n=$(grep -c . plan.jsonl)
THPSIM=$thpsim "$here/parallel.sh" plan.jsonl by-parallel > /dev/null 2>&1
"$thpsim" sweep merge plan.jsonl by-parallel --format json > parallel.json 2> parallel.err
check "GNU parallel: $n jobs merged" '[ -s parallel.json ]'
if ! conf=$("$here/slurm-local.sh" start "$tmp/slurm" 2> slurm-start.err); then
	no "a single-node Slurm cluster started: $(tail -n 3 slurm-start.err)"
	finish
fi
export "$conf"
ok "a single-node Slurm cluster started"
THPSIM=$thpsim timeout 600 sbatch --wait --array=0-$((n - 1)) -o "$tmp/slurm/%A_%a.out" \
	"$here/slurm.sbatch" "$tmp/plan.jsonl" "$tmp/by-slurm" > sbatch.out 2>&1
rc=$?
check "sbatch --array=0-$((n - 1)) ran every job" '[ $rc = 0 ] && [ "$(ls by-slurm/*.json | wc -l)" = "$n" ]'
"$thpsim" sweep merge plan.jsonl by-slurm --format json > slurm.json 2> slurm.err
check "the Slurm sweep's report is the GNU parallel one, byte for byte" 'cmp -s parallel.json slurm.json'
python3 "$here/against_compare.py" "$thpsim" plan.jsonl slurm.json > against.out 2>&1
check "and equals compare on each trace ($(tail -n 1 against.out))" \
	'tail -n 1 against.out | grep -q ", 0 failed$"'
finish
