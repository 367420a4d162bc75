#!/usr/bin/env bash
# tools/sweep/check-slurm.sh THPSIM PROGS [KERNELS]: make check-slurm
# (docs/sweep.md).
#
# A fleet's sweep run as a Slurm job array on a single-node cluster started
# here (tools/sweep/slurm-local.sh: munged, slurmctld and slurmd as local
# daemons, stopped at the end), and with GNU parallel: the two merged
# reports must be the same, byte for byte, and equal "thpsim compare" on
# each trace.  The fleet: tests/progs and Debian's python3 (three
# recordings, one service), sqlite3 and perl recorded here
# (record-progs.sh, record-real.sh), and the recordings made in the guests
# of make check-kernels (KERNELS: its folder, BUILD/kernels/*.trace; up to
# 6 of each kernel, 64 KiB mTHP rows left out), x Linux 6.12 and 6.18 x 4
# policies.  Fewer than 20 traces (no guest recordings yet: run make check
# first) is said, and counted as skipped.  Skips, saying why, without Debian's
# slurm-wlm and munge, GNU parallel, root, or a working thpsim record.
# Ends with "slurm: N passed, N failed, N skipped".
set -u
thpsim=$(readlink -f "${1:?usage: check-slurm.sh THPSIM PROGS [KERNELS]}")
progs=$(readlink -f "${2:?usage: check-slurm.sh THPSIM PROGS [KERNELS]}")
kernels=${3:+$(readlink -f "$3")}
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
why=$("$here/record-real.sh" "$thpsim" real) || skipping "$why"
[ -z "$why" ] || echo "note: $why"
mkdir guests
if [ -n "$kernels" ] && [ -d "$kernels" ]; then
	for r in $(ls "$kernels" | sed -n 's/^\(.*\)\.[^.]*\.trace$/\1/p' | sort -u); do
		ls "$kernels/$r".*.trace | grep -v -- '-64k\.trace$' | head -n 6 |
			while read -r t; do cp "$t" guests/; done
	done
fi
shopt -s nullglob
set -- traces real/*.trace
[ -d real/python3 ] && [ -n "$(ls real/python3)" ] && set -- "$@" --service python3=real/python3
[ -n "$(ls guests)" ] && set -- "$@" guests
printf 'churn.trace 40\npython3 20\nsqlite3.trace 10\nperl.trace 5\n' > weights
for w in python3 sqlite3.trace perl.trace; do   # a program left out has no weight
	grep -q "$w" <<< "$*" || sed -i "/^$w /d" weights
done
"$thpsim" sweep plan "$@" --kernel 6.12 --kernel 6.18 --layouts 2 --weights weights \
	-o plan.jsonl 2> plan.err
n=$(grep -c . plan.jsonl)
ntr=$(sed -n 's/.*jobs (\([0-9]*\) traces of \([0-9]*\) services.*/\1/p' plan.err)
echo "fleet: $(sed -n 's/.*jobs (\(.*\)) in .*/\1/p' plan.err): $(ls traces | wc -l) tests/progs," \
	"$(ls real | wc -l) real programs ($(ls real/python3 2>/dev/null | wc -l) python3 recordings)," \
	"$(ls guests | wc -l) recorded in the guests"
if [ "${ntr:-0}" -lt 20 ]; then
	echo "skip: a fleet of 20 traces or more needs the guests' recordings ($kernels/*.trace: run make check first)"
	skip=1
fi
THPSIM=$thpsim "$here/parallel.sh" plan.jsonl by-parallel > /dev/null 2>&1
"$thpsim" sweep merge plan.jsonl by-parallel --format json > parallel.json 2> parallel.err
check "GNU parallel: $n jobs merged" '[ -s parallel.json ]'
if ! conf=$("$here/slurm-local.sh" start "$tmp/slurm" 2> slurm-start.err); then
	no "a single-node Slurm cluster started: $(tail -n 3 slurm-start.err)"
	finish
fi
export "$conf"
ok "a single-node Slurm cluster started"
THPSIM=$thpsim timeout 1500 sbatch --wait --array=0-$((n - 1)) -o "$tmp/slurm/%A_%a.out" \
	"$here/slurm.sbatch" "$tmp/plan.jsonl" "$tmp/by-slurm" > sbatch.out 2>&1
rc=$?
check "sbatch --array=0-$((n - 1)) ran every job" '[ $rc = 0 ] && [ "$(ls by-slurm/*.json | wc -l)" = "$n" ]'
"$thpsim" sweep merge plan.jsonl by-slurm --format json > slurm.json 2> slurm.err
check "the Slurm sweep's report is the GNU parallel one, byte for byte" 'cmp -s parallel.json slurm.json'
python3 "$here/against_compare.py" "$thpsim" plan.jsonl slurm.json > against.out 2>&1
check "and equals compare on each trace ($(tail -n 1 against.out))" \
	'tail -n 1 against.out | grep -q ", 0 failed$"'
finish
