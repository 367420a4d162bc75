#!/usr/bin/env bash
# same-behaviour.sh REV [--soak OPS SEED] [TRACE]...: does the working tree's
# model behave as REV's?  For reshaping code that must change nothing.
#
# Builds REV in a temporary worktree and this tree, then runs both on the
# same inputs and diffs what they print:
#   - every scenarios/*.scn with 'thpsim run --format json' on the profiles
#     of Linux 6.18, 6.12, 6.1 and 3.8 and on the host's (--kernel auto);
#   - each TRACE with 'thpsim replay --format json' as recorded, under
#     enabled=always, enabled=never, 64 KiB folios on Linux 6.12's profile,
#     and --as-recorded on 6.1's (the run's own times, replay_s and the
#     layouts' seconds, are left out);
#   - with --soak, 'thpsim-soak --ops OPS --seed SEED --jobs 2' (the elapsed
#     seconds and the timed progress lines are left out).
# Scenarios are this tree's for both.  Prints the diff and "same-behaviour:
# N outputs, N differ"; exits 1 when one differs, 2 on a usage or build
# error.
set -u
usage() { echo "usage: tools/same-behaviour.sh REV [--soak OPS SEED] [TRACE]..." >&2; exit 2; }
[ $# -ge 1 ] || usage
rev=$1
shift
soak_ops='' soak_seed=''
if [ "${1:-}" = --soak ]; then
	[ $# -ge 3 ] || usage
	soak_ops=$2 soak_seed=$3
	shift 3
fi
here=$(git rev-parse --show-toplevel) || exit 2
cd "$here" || exit 2
git rev-parse --verify -q "$rev^{commit}" >/dev/null || { echo "same-behaviour: no commit $rev" >&2; exit 2; }
for t in "$@"; do
	[ -r "$t" ] || { echo "same-behaviour: cannot read trace $t" >&2; exit 2; }
done
work=$(mktemp -d /tmp/same-behaviour.XXXXXX) || exit 2
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1; rm -rf "$work"' EXIT
git worktree add --detach -q "$work/old" "$rev" || exit 2

build() { # DIR: the command and the soak, in DIR/build/same
	make -C "$1" -s -j2 O=build/same build/same/thpsim ${soak_ops:+build/same/thpsim-soak} \
		>"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 2; }
}
build "$work/old"
build "$here"

# The replay policies: a name, then its options (one string, split on spaces).
POLICIES=(
	"recorded|"
	"always|--set transparent_hugepage/enabled=always"
	"never|--set transparent_hugepage/enabled=never"
	"64k-6.12|--set thpsim/kernel=6.12 --set transparent_hugepage/hugepages-64kB/enabled=always"
	"as-recorded-6.1|--as-recorded --set thpsim/kernel=6.1"
)

save() { # FILE COMMAND...: what COMMAND prints, then its exit status
	local file=$1
	shift
	"$@" >"$file" 2>&1
	echo "exit $?" >>"$file"
}

outputs() { # DIR OUT TRACE...
	local dir=$1 bin=$1/build/same/thpsim out=$2 n t k pol
	shift 2
	mkdir -p "$out"
	for f in scenarios/*.scn; do
		n=$(basename "$f" .scn)
		for k in 6.18 6.12 6.1 3.8 auto; do
			save "$out/run-$n@$k" "$bin" run "$f" --kernel "$k" --format json
		done
	done
	for t in "$@"; do
		n=$(basename "$t")
		for pol in "${POLICIES[@]}"; do
			# shellcheck disable=SC2086 # the options are split on purpose
			save "$out/replay-$n@${pol%%|*}" "$bin" replay "$t" --format json ${pol#*|}
		done
	done
	if [ -n "$soak_ops" ]; then
		"$dir/build/same/thpsim-soak" --ops "$soak_ops" --seed "$soak_seed" --jobs 2 \
			--progress 0 --out "$out" 2>&1 | grep -v '^soak job' |
			sed 's/ seconds=[0-9]*//' >"$out/soak"
	fi
}
outputs "$work/old" "$work/a" "$@"
outputs "$here" "$work/b" "$@"

total=$(find "$work/a" -type f | wc -l)
diff -r -I '"replay_s"' -I '"seconds"' "$work/a" "$work/b" >"$work/diff"
cat "$work/diff"
# (diff -q would count a file whose only change is an ignored line)
differ=$(grep -c '^diff \|^Only in ' "$work/diff")
echo "same-behaviour: $total outputs, $differ differ ($rev against the working tree)"
[ "$differ" = 0 ]
