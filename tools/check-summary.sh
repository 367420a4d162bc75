#!/usr/bin/env bash
# check-summary.sh LOGDIR [MAKE_STATUS]: the last lines of make check.
#
# Every command make check ran through tools/check-run.sh left NAME.log and
# NAME.rc in LOGDIR.  A log's lines "[WHAT: ]N passed, N failed[, N skipped]"
# are summed.  A command whose log has no such line counts as one check,
# passed or failed by its exit status; a command that exited non-zero
# although its summary counts no failure (it died after printing it, or a
# loop stopped early) gets one failure more.  Each failing command is named.
# MAKE_STATUS is the status of the make that ran the stages: non-zero with
# no failure counted means a recipe failed outside check-run.sh, which is
# one failure too.  Under each failing command it prints the failure lines
# of its log (a line that begins "FAIL", "diff", "fail" or "error", and the
# indented lines under it; at most 40), or of its standard error (NAME.err:
# a sanitizer's report), so that the tail of make check's
# output says what failed where the log cannot be read (a CI run).  Ends
# with "check: N passed, N failed[, N skipped]" and exits 1 on any failure.
set -u
logs=${1:?usage: check-summary.sh LOGDIR [MAKE_STATUS]}
make_status=${2:-0}
p=0 f=0 s=0 n=0

# The lines of a log that say what failed, indented, at most 40; when it
# has none, what its standard error (NAME.err) said: a sanitizer's report
# lines, or else its last 10 lines.
failures() {
	local err=${1%.log}.err out
	out=$(awk '/^(FAIL|diff|fail|error)[ :]/ { on = 1; print; next }
		on && /^[ \t]/ { print; next }
		{ on = 0 }' "$1" 2>/dev/null | head -n 40)
	if [ -z "$out" ] && [ -s "$err" ]; then
		out=$(grep -E '^(WARNING|ERROR|SUMMARY): [A-Za-z]*Sanitizer|runtime error|^    #[0-9] ' \
			"$err" | head -n 24)
		[ -n "$out" ] || out=$(tail -n 10 "$err")
	fi
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/    /'
	return 0
}
for rcf in "$logs"/*.rc; do
	[ -e "$rcf" ] || continue
	name=$(basename "$rcf" .rc)
	log=$logs/$name.log
	rc=$(cat "$rcf")
	read -r lp lf ls nl < <(awk '{ sub(/^[a-z0-9 -]+: /, "") }
		/^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$/ { p += $1; f += $3; s += $5; n++ }
		END { print p + 0, f + 0, s + 0, n + 0 }' "$log" 2>/dev/null || echo 0 0 0 0)
	if [ "$nl" = 0 ]; then
		if [ "$rc" = 0 ]; then
			lp=1
		else
			lf=1
			echo "check: $name: FAILED with exit status $rc and no summary line ($log)"
			failures "$log"
		fi
	elif [ "$rc" != 0 ] && [ "$lf" = 0 ]; then
		lf=1
		echo "check: $name: FAILED with exit status $rc although its summary counts no failure ($log)"
		failures "$log"
	elif [ "$lf" != 0 ]; then
		echo "check: $name: $lf failed ($log)"
		failures "$log"
	fi
	p=$((p + lp)) f=$((f + lf)) s=$((s + ls)) n=$((n + 1))
done
if [ "$n" = 0 ]; then
	echo "check: no command left a status in $logs"
	f=$((f + 1))
elif [ "$make_status" != 0 ] && [ "$f" = 0 ]; then
	echo "check: a recipe failed outside tools/check-run.sh (make exited with $make_status)"
	f=$((f + 1))
fi
echo "make check: unit tests, fuzz corpora, regressions, failure injection, soak, ASan+UBSan, TSan, scenarios, layers, kernels in QEMU"
if [ "$s" != 0 ]; then
	echo "check: $p passed, $f failed, $s skipped"
else
	echo "check: $p passed, $f failed"
fi
[ "$f" = 0 ]
