#!/usr/bin/env bash
# check-layers.sh [SRC_DIR]: no lower layer includes a higher layer's header.
#
# The layers, lowest first (docs/architecture.md draws them):
#   mm        src/mm and its public header include/thpsim.h: the model
#   trace     src/trace: the trace format
#   util      src/util: helpers shared above the model (JSON, kernel
#             profiles, the --set knob list)
#   scenario, replay, record   src/scenario, src/replay, src/record: the
#             libraries, usable from tests without the command line
#   cli       src/cli: arguments and output formats
# Above the model everything reaches it through include/thpsim.h; src/mm's
# own headers are the model's insides.  The three libraries do not include
# each other.  Each quoted #include is resolved as the compiler does (the
# file's folder, then -Iinclude -Isrc/mm -Isrc) and checked against the
# ALLOWED row of the including file's folder.  Ends with
# "layers: N passed, N failed" (one per include line) and exits 1 on a
# failure.
set -u
cd "${1:-.}" || exit 2

# folder: the folders whose headers it may include
declare -A ALLOWED=(
	[include]="include"
	[src/mm]="include src/mm"
	[src/trace]="include src/trace"
	[src/util]="include src/trace src/util"
	[src/scenario]="include src/trace src/util src/scenario"
	[src/replay]="include src/trace src/util src/replay"
	[src/record]="include src/trace src/util src/record"
	[src/cli]="include src/trace src/util src/scenario src/replay src/record src/cli"
)

# Known exceptions, each "FILE -> HEADER", each with its follow-up.  None
# today: record.c was one until the recorder became a library call
# (record_run) and its command moved to src/cli/record_cmd.c.
EXCEPTIONS=()

pass=0 fail=0
resolve() { # FILE HEADER: the path the compiler would open, or nothing
	local d
	for d in "$(dirname "$1")" include src/mm src; do
		if [ -f "$d/$2" ]; then
			case $2 in
			*..* | ./*) realpath --relative-to=. "$d/$2" ;;
			*) echo "$d/$2" ;;
			esac
			return
		fi
	done
}

for f in $(find include src -name '*.[ch]' | sort); do
	dir=$(dirname "$f")
	allowed=${ALLOWED[$dir]-}
	if [ -z "$allowed" ]; then
		echo "layers: $f: its folder $dir has no row in tools/check-layers.sh"
		fail=$((fail + 1))
		continue
	fi
	while IFS=: read -r line hdr; do
		target=$(resolve "$f" "$hdr")
		if [ -z "$target" ]; then
			echo "layers: $f:$line: \"$hdr\" is no file of the tree"
			fail=$((fail + 1))
			continue
		fi
		tdir=$(dirname "$target")
		if [[ " $allowed " == *" $tdir "* ]]; then
			pass=$((pass + 1))
		elif [[ " ${EXCEPTIONS[*]} " == *" $f -> $target "* ]]; then
			echo "layers: $f:$line: includes $target: a known exception (see tools/check-layers.sh)"
			pass=$((pass + 1))
		else
			echo "layers: $f:$line: includes $target, but $dir may include only: $allowed"
			fail=$((fail + 1))
		fi
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		 paste -d: <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" | cut -d: -f1) -)
done
echo "layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
