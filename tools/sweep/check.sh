#!/usr/bin/env bash
# tools/sweep/check.sh THPSIM PROGS: make check's sweep (docs/sweep.md).
#
# Records tests/progs (PROGS: their build folder) into traces, and brkjump
# three more times as one service, plans a sweep of them (4 policies x
# Linux 6.12 and 6.18, 2 layouts, one trace weighted 40, the service 10), runs it with GNU parallel (tools/sweep/parallel.sh) and holds the
# merged report against "thpsim compare" on each trace
# (tools/sweep/against_compare.py), and runs it again as the Kubernetes
# Indexed Job of tools/sweep/k8s-job.yaml (tools/sweep/check-k8s.py: the
# manifest against Kubernetes' own types where kubectl is installed, then
# each index with $JOB_COMPLETION_INDEX) for the same report.  Then what an engine does to a sweep:
# results removed, truncated or from another version (merge names exactly
# those jobs and merges nothing; "sweep run --missing" redoes them and the
# report is the same again), a run killed with SIGKILL at random 10 times
# (never a result that looks finished but is not), and a plan whose trace is
# gone or changed (the job's error names it).  Ends with
# "sweep: N passed, N failed, N skipped".  Without GNU parallel, or where
# thpsim record cannot run (not root, no perf events), it says why and skips.
set -u
thpsim=$(readlink -f "${1:?usage: check.sh THPSIM PROGS}")
progs=$(readlink -f "${2:?usage: check.sh THPSIM PROGS}")
here=$(dirname "$(readlink -f "$0")")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/thpsim-sweep-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
no() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { if eval "$2"; then ok "$1"; else no "$1"; fi; }
finish() { echo "sweep: $pass passed, $fail failed, $skip skipped"; exit $((fail ? 1 : 0)); }

if ! command -v parallel >/dev/null; then
	echo "skip: GNU parallel is not installed (Debian's parallel package)"
	skip=1
	finish
fi
cd "$tmp" || exit 2
if ! why=$("$here/record-progs.sh" "$thpsim" "$progs" traces); then
	echo "skip: $why"
	skip=1
	finish
fi
# three recordings of one program, one service: their layouts differ run
# to run (brkjump's heap offset), so its spread covers all three
mkdir runs
"$thpsim" record -q --runs 3 -o runs/brkjump -- "$progs/brkjump" > runs.out 2>&1
printf '# instances of each service\nchurn.trace 40\nbrkjump-runs 10\n' > weights
"$thpsim" sweep plan traces --service brkjump-runs=runs --kernel 6.12 --kernel 6.18 \
	--layouts 2 --weights weights -o plan.jsonl 2> plan.err
check "plan: (8 traces + 3 recordings of one service) x 2 kernels x 4 policies" \
	'[ "$(grep -c . plan.jsonl)" = 88 ] && grep -q "11 traces of 9 services" plan.err'
THPSIM=$thpsim "$here/parallel.sh" plan.jsonl results > run.out 2>&1
check "GNU parallel ran every job" '[ "$(ls results/*.json | wc -l)" = 88 ]'
"$thpsim" sweep merge plan.jsonl results --format json > merged.json 2> merge.err
check "merge of a complete sweep" '[ -s merged.json ]'
python3 "$here/against_compare.py" "$thpsim" plan.jsonl merged.json > against.out 2>&1
check "merged report equals compare on each trace ($(tail -n 1 against.out))" \
	'tail -n 1 against.out | grep -q ", 0 failed$"'
grep '^FAIL' against.out | head -n 5
"$thpsim" sweep merge plan.jsonl results --svg fleet.svg > /dev/null 2>&1
check "merge --svg draws the report" \
	'python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(len(d.getElementsByTagName(\"rect\")) < 17)" fleet.svg'
"$thpsim" sweep merge plan.jsonl results --svg fleet.svg > /dev/null 2> svg.err
rc=$?
check "and replaces an existing chart only with --force" '[ $rc = 2 ] && grep -q exists svg.err'

# the Kubernetes manifest: checked against Kubernetes' types, then run here
# as the Indexed Job it describes (its volume a copy of this folder)
mkdir k8s
cp -r plan.jsonl traces runs k8s/
python3 "$here/check-k8s.py" "$here/k8s-job.yaml" k8s/plan.jsonl k8s "$thpsim" > k8s.out 2>&1
cat k8s.out
grep -q '^skip' k8s.out && skip=$((skip + 1))
check "the Kubernetes manifest checks out and its Indexed Job runs every job" \
	'! grep -q "^FAIL" k8s.out && grep -q "^ok   the Indexed Job" k8s.out'
(cd k8s && "$thpsim" sweep merge plan.jsonl results --format json > ../k8s.json 2> ../k8s.err)
check "the Indexed Job's report is GNU parallel's, byte for byte" 'cmp -s merged.json k8s.json'

# results removed, truncated, from another version: named, nothing merged
cp -r results spoilt
rm spoilt/churn.always.6.12.json spoilt/sparse.never.6.18.json
head -c 200 spoilt/mappings.madvise.6.12.json > t && mv t spoilt/mappings.madvise.6.12.json
sed -i 's/"version": "[^"]*"/"version": "0.0.9"/' spoilt/stacks.always-no-hzp.6.18.json
"$thpsim" sweep merge plan.jsonl spoilt > spoilt.out 2> spoilt.err
rc=$?
check "merge with 4 spoilt results exits 1 and prints no report" '[ $rc = 1 ] && [ ! -s spoilt.out ]'
check "merge names exactly the 4 jobs" \
	'[ "$(grep -c "^thpsim: sweep merge: job" spoilt.err)" = 4 ] &&
	 grep -q "churn.always.6.12): missing" spoilt.err &&
	 grep -q "sparse.never.6.18): missing" spoilt.err &&
	 grep -q "mappings.madvise.6.12): .*not a complete result" spoilt.err &&
	 grep -q "stacks.always-no-hzp.6.18): .*from thpsim 0.0.9" spoilt.err'
"$thpsim" sweep run plan.jsonl --missing -o spoilt > /dev/null 2>&1
"$thpsim" sweep merge plan.jsonl spoilt --format json > remerged.json 2>/dev/null
check "sweep run --missing, then the same report" 'cmp -s merged.json remerged.json'

# SIGKILL at random, 10 times: what is there is complete; the rest missing
mkdir killed
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$thpsim" sweep run plan.jsonl --missing -o killed > /dev/null 2>&1 &
	sleep "0.0$((RANDOM % 9 + 1))"
	kill -KILL $! 2>/dev/null
	wait $! 2>/dev/null
done
"$thpsim" sweep merge plan.jsonl killed > /dev/null 2> killed.err
check "after 10 kills merge lists only missing jobs, none cut short" \
	'! grep -q "not a complete result" killed.err &&
	 [ "$(grep -c "^thpsim: sweep merge: job" killed.err)" = "$((88 - $(ls killed/*.json 2>/dev/null | wc -l)))" ]'
"$thpsim" sweep run plan.jsonl --missing -o killed > /dev/null 2>&1
"$thpsim" sweep merge plan.jsonl killed --format json > killed.json 2>/dev/null
check "resumed after the kills: the uninterrupted report" 'cmp -s merged.json killed.json'

# a service's recordings must be runs of one command; its weight is the
# service's, not a recording's
"$thpsim" sweep plan traces/churn.trace --service mixed=runs --service mixed=traces/sparse.trace \
	-o bad.jsonl > /dev/null 2> mixed.err
rc=$?
check "a service of two commands is refused, naming both traces" \
	'[ $rc = 2 ] && [ ! -e bad.jsonl ] && grep -q "service .mixed.: .*sparse.trace recorded .*brkjump" mixed.err'
printf 'brkjump.2.trace 5\n' > badweights
"$thpsim" sweep plan traces --service brkjump-runs=runs --weights badweights -o bad.jsonl \
	> /dev/null 2> weight.err
rc=$?
check "a weight given to one recording of a service is refused (file:line)" \
	'[ $rc = 2 ] && [ ! -e bad.jsonl ] && grep -q "badweights:1: brkjump.2.trace is a recording of the service" weight.err'

# a plan whose trace is gone, or changed since the plan
cp traces/brkjump.trace traces/brkjump.bak
printf 'x' >> traces/brkjump.trace
"$thpsim" sweep run plan.jsonl --index 0 -o changed > /dev/null 2> changed.err
rc=$?
check "a changed trace: the job fails naming it" \
	'[ $rc = 1 ] && grep -q "job 0 (brkjump.never.6.12): trace .*changed since the plan" changed.err'
rm traces/brkjump.trace
"$thpsim" sweep run plan.jsonl --index 0 -o changed > /dev/null 2> gone.err
rc=$?
check "a missing trace: the job fails naming it" \
	'[ $rc = 1 ] && grep -q "job 0 (brkjump.never.6.12): trace" gone.err'
mv traces/brkjump.bak traces/brkjump.trace
finish
