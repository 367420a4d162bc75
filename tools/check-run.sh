#!/usr/bin/env bash
# check-run.sh LOGDIR NAME COMMAND [ARG]...: one command of make check.
#
# The command's standard output goes to the terminal and to LOGDIR/NAME.log,
# its standard error to the terminal and to LOGDIR/NAME.err (a sanitizer's
# report, a crash), its exit status to LOGDIR/NAME.rc;
# tools/check-summary.sh reads them, so a
# command that fails without printing a summary line still counts as a
# failure, by name.  Exits with the command's status, or with 0 under
# CHECK_KEEP_GOING=1: make check sets it so that every command runs after
# one fails and the summary, not make, says what failed.
set -u
logs=${1:?usage: check-run.sh LOGDIR NAME COMMAND [ARG]...}
name=${2:?usage: check-run.sh LOGDIR NAME COMMAND [ARG]...}
shift 2
mkdir -p "$logs"
rm -f "$logs/$name.rc"
set -o pipefail
# standard output to fd 3, the outer tee; standard error to the inner tee
{ "$@" 2>&1 1>&3 3>&- | tee "$logs/$name.err" >&2; } 3>&1 | tee "$logs/$name.log"
rc=$?
echo "$rc" > "$logs/$name.rc"
if [ "$rc" != 0 ]; then
	echo "check-run: $name: exit status $rc" >&2
fi
[ "${CHECK_KEEP_GOING:-0}" = 1 ] && exit 0
exit "$rc"
