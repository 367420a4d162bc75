#!/usr/bin/env bash
# The scenario corpus in the model under every kernel profile its "when"
# guards name, whatever kernel this machine runs: Linux 6.18 with and
# without the zero page (the figures measured on hosts of both kinds) and
# Linux 6.1 and 6.12 (measured in their QEMU guests, make check-kernels).
# Every expectation must hold.  Ends with "profiles: N passed, N failed".
set -u
bin=${1:?usage: check-profiles.sh THPSIM [SCENARIO_DIR]}
dir=${2:-scenarios}
pass=0 fail=0
for prof in 6.18 6.18,thpsim/zero_page=0 6.12 6.1; do
	for f in "$dir"/*.scn; do
		if out=$("$bin" run "$f" --kernel "$prof" 2>&1); then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL $f on the model as Linux $prof:"
			echo "$out" | grep -E "FAILED|error" | sed 's/^/     /'
		fi
	done
done
echo "profiles: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
