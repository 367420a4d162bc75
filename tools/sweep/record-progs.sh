#!/usr/bin/env bash
# tools/sweep/record-progs.sh THPSIM PROGS DIR: tests/progs (PROGS: their
# build folder) recorded into DIR/NAME.trace, the sweep checks' traces.
# Exit 1 with the reason on standard output when thpsim record cannot run
# here (not root, no perf events).
set -u
thpsim=${1:?usage: record-progs.sh THPSIM PROGS DIR}
progs=${2:?usage: record-progs.sh THPSIM PROGS DIR}
dir=${3:?usage: record-progs.sh THPSIM PROGS DIR}
mkdir -p "$dir"
for p in "coverletter" "churn" "mappings" "snapshot" "brkjump" "sparse --size 64" \
	"stacks --threads 4" "server --size 16 --stride 8 --used 50 --idle 0"; do
	name=${p%% *}
	if ! "$thpsim" record -q -o "$dir/$name.trace" -- $progs/$p > "$dir/$name.out" 2>&1; then
		echo "thpsim record cannot run here: $(tail -n 1 "$dir/$name.out")"
		exit 1
	fi
	rm -f "$dir/$name.out"
done
