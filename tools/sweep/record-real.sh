#!/usr/bin/env bash
# tools/sweep/record-real.sh THPSIM DIR: Debian's real programs recorded on
# this machine into DIR, for the sweep's fleet (make check-slurm): python3
# building and dropping a dict, then forking, three times (three recordings
# of one service, DIR/python3/python3.N.trace, whose layouts and timing
# differ run to run), sqlite3 filling a table in memory, perl filling a hash
# (DIR/sqlite3.trace, DIR/perl.trace).  The workloads are
# tools/validate/ranges-progs.sh's, smaller.  A program that is not
# installed is left out and named on standard output; exit 1 with the
# reason when thpsim record cannot run here.
set -u
thpsim=${1:?usage: record-real.sh THPSIM DIR}
dir=${2:?usage: record-real.sh THPSIM DIR}
mkdir -p "$dir/python3"
rec() { # NAME PROGRAM RECORD-ARGUMENTS... (the command after their --)
	local name=$1 prog=$2
	shift 2
	if ! command -v "$prog" >/dev/null; then
		echo "left out: $name ($prog is not installed)"
		return 0
	fi
	if ! "$thpsim" record -q "$@" > "$dir/$name.out" 2>&1; then
		echo "thpsim record cannot run here: $(tail -n 1 "$dir/$name.out")"
		exit 1
	fi
	rm -f "$dir/$name.out"
}
rec python3 python3 --runs 3 -o "$dir/python3/python3" -- python3 -c '
d = {i: str(i) * 3 for i in range(150000)}
b = [bytearray(3000) for _ in range(1500)]
del d
import os
if os.fork() == 0:
    l = list(range(800000)); os._exit(0)
os.wait()'
rec sqlite3 sqlite3 -o "$dir/sqlite3.trace" -- sqlite3 :memory: "create table t(a,b); with recursive c(x) as (select 1 union all select x+1 from c where x<100000) insert into t select x, randomblob(64) from c; select count(*) from t;"
rec perl perl -o "$dir/perl.trace" -- perl -e 'my %h; $h{$_} = "x" x 40 for 1..100000; print scalar(keys %h), "\n"'
