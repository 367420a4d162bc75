#!/usr/bin/env bash
# check-kernels.sh BUILD_DIR STATIC_DIR - the scenario corpus and the
# programs of tests/progs on real Linux kernels booted in QEMU
# (docs/kernels.md; "make check-kernels" runs it).
#
#  1. finds what it needs: qemu-system-x86_64 and a static busybox (installs
#     qemu-system-x86 and busybox-static when root and they are missing), and
#     each kernel of KERNEL_PACKAGES: the newest package of that name in the
#     apt lists, fetched with "apt-get download" and unpacked with
#     "dpkg-deb -x" into KERNEL_CACHE/PACKAGE_VERSION/ (outside the source
#     tree; nothing is installed into the host's /boot).  Without the
#     network, the newest cached version of that package is used;
#  2. builds an initramfs: busybox, STATIC_DIR/thpsim, STATIC_DIR/progs,
#     scenarios/, tools/kernels/init and tools/kernels/programs;
#  3. boots each kernel under TCG with "thpsim.guest=1" on its command line:
#     the guest's /init runs "thpsim validate" and records and replays the
#     programs, writing the results to its second serial port, a file here;
#  4. tools/kernels/summarize.py prints the table, writes
#     BUILD_DIR/kernels/summary.json and BUILD_DIR/logs/kernels.log (the
#     "kernels: N passed, N failed, N skipped" line make check sums) and
#     exits 1 on any diff.
#
# What cannot run here (no QEMU and no way to install it, no kernel package
# and none cached, CHECK_KERNELS=0) is reported as skipped, with the reason,
# never as passed.
#
# Environment: KERNEL_PACKAGES (apt package names where * stands for a
# number: an ABI or a patch level, so -rt and -cloud flavours never fit;
# SUITE:PATTERN takes the package from that suite of Debian's archive,
# DEBIAN_MIRROR, whose index is fetched into KERNEL_CACHE/apt/SUITE with an
# apt configuration of its own: this machine's apt sources and lists are
# never changed), KERNEL_JOBS (guests booted at once, default 2: each is
# one vCPU of TCG, about one host CPU), KERNEL_SPLIT=0 (the 6.12 guest's
# randomised runs in that guest, not in a guest of their own beside it),
# KERNEL_CACHE, QEMU (the qemu-system-x86_64 to run), KERNELS_INSTALL=0
# (install nothing), KERNEL_EXTRA=SCRIPT (a measurement by hand: each guest
# runs SCRIPT alone, with KERNEL_SMP vCPUs, default 1, and its output is
# printed instead of the checks), KERNEL_ASLR_MORE=FILE (rows of the form
# of tools/kernels/aslr added to the 6.12 guest's randomised runs: a
# measurement by hand that takes longer, tools/kernels/aslr-more),
# KERNEL_QEMU_ARGS (more arguments for QEMU: "-icount shift=0,sleep=off"
# gives a measurement by hand a clock that counts the guest's instructions,
# 1 ns each, not the host's time, so that TCG's pace does not enter it),
# BOOT_TIMEOUT (seconds per guest), CHECK_KERNELS=0 (skip them all).
set -uo pipefail

O=${1:?usage: check-kernels.sh BUILD_DIR STATIC_DIR}
S=${2:?usage: check-kernels.sh BUILD_DIR STATIC_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
OUT=$O/kernels
LOGS=$O/logs
# 6.1 and 6.12 from this machine's apt lists (bookworm); 6.18 from
# trixie-backports: the version of the hosts we run on, but booted with the
# huge zero page, which some of those hosts lack (pvm_no_zero_page=1)
KERNEL_PACKAGES=${KERNEL_PACKAGES:-"linux-image-6.1.0-*-amd64-unsigned linux-image-6.12.*+deb12-amd64-unsigned trixie-backports:linux-image-6.18.*+deb13-amd64"}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
KERNEL_JOBS=${KERNEL_JOBS:-2}
KERNEL_SPLIT=${KERNEL_SPLIT:-1}
KERNEL_CACHE=${KERNEL_CACHE:-/var/cache/thpsim-kernels}
# the 6.12 guest takes 220-280 s of make check's on one machine of our
# kind, 400-470 s on another whose TCG runs at half the speed (470.6 s once
# its aslr rows replayed a layout in every heap class, 2026-12-07); two at
# a time, each beside another guest, the longest took 444-494 s there, and
# CI's machine ran stop 37's checks 1.3 times as long as that one: the
# timeout is there for a guest that hangs, so it leaves room for all that
BOOT_TIMEOUT=${BOOT_TIMEOUT:-900}
QEMU=${QEMU:-qemu-system-x86_64}
KERNELS_INSTALL=${KERNELS_INSTALL:-1}
KERNEL_EXTRA=${KERNEL_EXTRA:-}
KERNEL_ASLR_MORE=${KERNEL_ASLR_MORE:-}
KERNEL_SMP=${KERNEL_SMP:-1}
KERNEL_QEMU_ARGS=${KERNEL_QEMU_ARGS:-}

rm -rf "$OUT"
mkdir -p "$OUT" "$LOGS"
RUNS=$OUT/runs.tsv # PATTERN  PACKAGE  VERSION  STATUS  SECONDS  RESULTS  REASON
: > "$RUNS"

say() { echo "check-kernels: $*" >&2; }

# run: one row of RUNS
run_row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RUNS"; }

# Every kernel skipped, for one reason: the summary says so and counts them.
skip_all() {
	say "skipped: $1"
	for pat in $KERNEL_PACKAGES; do
		run_row "$pat" "-" "-" skipped 0 "-" "$1"
	done
	summarize
	exit $?
}

summarize() {
	python3 "$HERE/summarize.py" "$RUNS" "$OUT/summary.json" "$LOGS/kernels.log"
}

is_root() { [ "$(id -u)" = 0 ]; }

updated=0
apt_update_once() {
	[ $updated = 1 ] && return 0
	updated=1
	is_root || return 1
	say "apt-get update"
	apt-get update -qq >/dev/null 2>&1
}

# need PACKAGE TEST-COMMAND...: install PACKAGE when the test fails
need() {
	local pkg=$1
	shift
	"$@" && return 0
	[ "$KERNELS_INSTALL" = 1 ] && is_root || return 1
	command -v apt-get >/dev/null || return 1
	apt_update_once
	say "installing $pkg"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" \
		>/dev/null 2>&1 || return 1
	"$@"
}

if [ "${CHECK_KERNELS:-1}" = 0 ]; then
	skip_all "CHECK_KERNELS=0"
fi
command -v python3 >/dev/null || { echo "check-kernels: needs python3" >&2; exit 2; }

have_qemu() { command -v "$QEMU" >/dev/null; }
have_busybox() { dpkg -s busybox-static >/dev/null 2>&1 && [ -x /bin/busybox ]; }
need qemu-system-x86 have_qemu ||
	skip_all "$QEMU is missing and qemu-system-x86 cannot be installed here"
need busybox-static have_busybox ||
	skip_all "a static busybox is missing and busybox-static cannot be installed here"
for f in "$S/thpsim" "$S/progs/coverletter" "$S/progs/churn"; do
	[ -x "$f" ] || { echo "check-kernels: $f is not built (make check-kernels builds it)" >&2; exit 2; }
done

# ---- the kernels ----
mkdir -p "$KERNEL_CACHE" 2>/dev/null || true
if ! [ -w "$KERNEL_CACHE" ]; then
	KERNEL_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/thpsim-kernels
	mkdir -p "$KERNEL_CACHE"
fi

# The pattern as an extended regular expression: * is a number.
pattern_re() {
	printf '^%s$' "$(printf '%s' "$1" | sed 's/[.+]/\\&/g; s/\*/[0-9]+/g')"
}

# APT: the apt options of the suite being fetched from: none for this
# machine's own lists; for another suite, a sources list, lists and cache of
# its own under KERNEL_CACHE/apt/SUITE (set by apt_suite).
APT=()
apt_suite() {
	local suite=$1 d=$KERNEL_CACHE/apt/$1
	APT=()
	[ -z "$suite" ] && return 0
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial" || return 1
	echo "deb $DEBIAN_MIRROR $suite main" > "$d/sources.list"
	APT=(-o "Dir::Etc::SourceList=$d/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	     -o "Dir::State::Lists=$d/lists" -o "Dir::Cache=$d/cache" -o APT::Sandbox::User=root)
}

# The index of a suite of its own, fetched once per run (needs the network,
# not root: nothing of the machine's apt is written).
suite_updated=" "
suite_update_once() {
	case $suite_updated in *" $1 "*) return 0 ;; esac
	suite_updated="$suite_updated$1 "
	say "apt-get update of $1 (its own lists in $KERNEL_CACHE/apt/$1)"
	apt-get "${APT[@]}" update -qq >/dev/null 2>&1
}

# The newest package of the apt lists whose name fits the pattern.
newest_package() {
	local re
	re=$(pattern_re "$1")
	apt-cache "${APT[@]}" search --names-only "$re" 2>/dev/null | awk '{ print $1 }' |
		grep -E "$re" | sort -V | tail -n 1
}

# fetch [SUITE:]PATTERN: prints "PACKAGE VERSION DIR" of a usable kernel, or
# a reason on stderr and fails.
fetch() {
	local pat=$1 suite="" pkg ver dir tmp
	if [[ $pat == *:* ]]; then
		suite=${pat%%:*} pat=${pat#*:}
	fi
	apt_suite "$suite" || { echo "cannot make $KERNEL_CACHE/apt/$suite" >&2; return 1; }
	# a suite of its own is fetched first; this machine's lists only when
	# they lack the package
	if [ -n "$suite" ]; then
		suite_update_once "$suite"
	fi
	pkg=$(newest_package "$pat")
	if [ -z "$pkg" ] && [ -z "$suite" ] && apt_update_once; then
		pkg=$(newest_package "$pat")
	fi
	if [ -n "$pkg" ]; then
		ver=$(apt-cache "${APT[@]}" policy "$pkg" 2>/dev/null | awk '/Candidate:/ { print $2 }')
		dir=$KERNEL_CACHE/${pkg}_$ver
		if [ -n "$ver" ] && [ "$ver" != "(none)" ] && ! [ -f "$dir/complete" ]; then
			say "fetching $pkg $ver"
			tmp=$(mktemp -d "$KERNEL_CACHE/.fetch.XXXXXX")
			if (cd "$tmp" && apt-get "${APT[@]}" download -qq -o APT::Sandbox::User=root \
				"$pkg=$ver" >/dev/null 2>"$tmp/err") &&
			   dpkg-deb -x "$tmp"/*.deb "$tmp/x" &&
			   mkdir -p "$dir" &&
			   cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz" &&
			   cp "$tmp"/x/boot/config-* "$dir/config" 2>/dev/null; then
				ls "$tmp"/x/boot/vmlinuz-* | sed 's|.*/vmlinuz-||' > "$dir/release"
				touch "$dir/complete"
			else
				say "cannot fetch $pkg $ver: $(tail -n 1 "$tmp/err" 2>/dev/null)"
			fi
			rm -rf "$tmp"
		fi
		if [ -f "$dir/complete" ]; then
			echo "$pkg $ver $dir"
			return 0
		fi
	fi
	# offline: the newest version of the pattern already cached
	dir=$(ls -d "$KERNEL_CACHE"/$pat"_"* 2>/dev/null |
		while read -r d; do b=${d##*/}; [[ ${b%%_*} =~ $(pattern_re "$pat") ]] && echo "$d"; done |
		sort -V | tail -n 1)
	if [ -n "$dir" ] && [ -f "$dir/complete" ]; then
		say "using the cached $(basename "$dir")"
		dir=${dir%/}
		local base=${dir##*/}
		echo "${base%%_*} ${base#*_} $dir"
		return 0
	fi
	echo "no package $pat in the apt lists${suite:+ of $suite} and none cached in $KERNEL_CACHE" >&2
	return 1
}

# ---- the initramfs ----
ROOT=$OUT/initramfs
mkdir -p "$ROOT/bin" "$ROOT/progs" "$ROOT/scenarios"
cp /bin/busybox "$ROOT/bin/busybox"
# the guest's input of numbers (tools/kernels/init), made here by the same
# busybox, in a fraction of the guest's time
"$ROOT/bin/busybox" awk 'BEGIN { srand(1); for (i = 0; i < 300000; i++) print int(rand() * 1e9) }' \
	> "$ROOT/numbers"
cp "$S/thpsim" "$ROOT/thpsim"
strip "$ROOT/thpsim" 2>/dev/null || true
if [ -x "$S/thpsim-test" ]; then
	cp "$S/thpsim-test" "$ROOT/thpsim-test"
	strip "$ROOT/thpsim-test" 2>/dev/null || true
fi
for p in "$S"/progs/*; do cp "$p" "$ROOT/progs/"; done
cp "$SRC"/scenarios/*.scn "$ROOT/scenarios/"
# Debian's own programs that tools/kernels/programs runs, with the shared
# libraries they load, where this machine has them (a row whose program is
# missing is skipped in the guest, with the reason)
# python3 -S -I reads only its landmark (os.py) and encodings/ (strace), and
# its compiled forms, copied too so that no run writes them
# with_libs PROG...: each program, with the shared libraries ldd says it
# loads, copied into the initramfs at its own path
with_libs() {
	local prog f
	for prog in "$@"; do
		for f in "$prog" $(ldd "$prog" 2>/dev/null |
				  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
			mkdir -p "$ROOT$(dirname "$f")"
			cp -L "$f" "$ROOT$f"
		done
	done
}
for prog in /usr/bin/xz /usr/bin/sort /usr/bin/sqlite3 /usr/bin/perl /usr/bin/python3; do
	[ -x "$prog" ] && with_libs "$prog"
done
# redis (Debian's redis-tools): its server is the binary redis-check-rdb,
# which acts as the server under any other name (redis-server's package
# only links it and starts a service on the machine, which we do not want)
if [ -x /usr/bin/redis-check-rdb ] && [ -x /usr/bin/redis-cli ] && [ -x /usr/bin/redis-benchmark ]; then
	with_libs /usr/bin/redis-check-rdb /usr/bin/redis-cli /usr/bin/redis-benchmark
	mv "$ROOT/usr/bin/redis-check-rdb" "$ROOT/usr/bin/redis-server"
fi
if [ -x /usr/bin/python3 ]; then
	pylib=$(/usr/bin/python3 -S -I -c 'import os; print(os.path.dirname(os.__file__))')
	for f in "$pylib/os.py" "$pylib"/encodings/__init__.py "$pylib"/encodings/aliases.py \
		"$pylib"/encodings/utf_8.py "$pylib"/encodings/__pycache__/__init__.*.pyc \
		"$pylib"/encodings/__pycache__/aliases.*.pyc "$pylib"/encodings/__pycache__/utf_8.*.pyc; do
		[ -f "$f" ] || continue
		mkdir -p "$ROOT$(dirname "$f")"
		cp -L -p "$f" "$ROOT$f" # the times kept: a .pyc holds its source's
	done
	mkdir -p "$ROOT$pylib/lib-dynload"
fi
cp "$HERE/init" "$HERE/programs" "$HERE/limits" "$HERE/access" "$HERE/aslr" \
   "$HERE/usable.awk" "$ROOT/"
rm -f "$ROOT/extra" "$ROOT/aslr-more"
if [ -n "$KERNEL_EXTRA" ]; then
	cp "$KERNEL_EXTRA" "$ROOT/extra" || exit 2
fi
if [ -n "$KERNEL_ASLR_MORE" ]; then
	cp "$KERNEL_ASLR_MORE" "$ROOT/aslr-more" || exit 2
fi
chmod +x "$ROOT/init"
mkdir -p "$ROOT/boot"

# initramfs RELEASE CONFIG: OUT/RELEASE.initramfs.gz, the common root with
# this kernel's build configuration as /boot/config-RELEASE, where thpsim
# kernel-profile reads it (Debian's kernels have no /proc/config.gz)
initramfs() {
	rm -f "$ROOT"/boot/config-*
	[ -f "$2" ] && cp "$2" "$ROOT/boot/config-$1"
	(cd "$ROOT" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) |
		gzip -1 > "$OUT/$1.initramfs.gz"
}

# boot RELEASE DIR [PART]: one guest, its files OUT/RELEASE[.PART].*: the
# console, the results, QEMU's messages, and "STATUS SECONDS REASON" in
# .status.  PART (thpsim.part=PART on its command line): the part of the
# checks it runs (tools/kernels/init), all of them without; the main part's
# files are the kernel's own, OUT/RELEASE.*.
boot() {
	local rel=$1 dir=$2 part=${3:-} f t0 rc secs status=ran why=-
	f=$OUT/$rel
	[ -n "$part" ] && [ "$part" != main ] && f=$f.$part
	t0=$(date +%s.%N)
	# KERNEL_QEMU_ARGS unquoted: words for QEMU
	timeout "$BOOT_TIMEOUT" "$QEMU" -m 2048 -smp "$KERNEL_SMP" $KERNEL_QEMU_ARGS -nographic -no-reboot \
		-monitor none -kernel "$dir/vmlinuz" -initrd "$OUT/$rel.initramfs.gz" \
		-append "console=ttyS0 transparent_hugepage=madvise thpsim.guest=1 ${part:+thpsim.part=$part }panic=-1 quiet" \
		-serial "file:$f.console" -serial "file:$f.results" \
		< /dev/null > "$f.qemu" 2>&1
	rc=$?
	secs=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
	if [ $rc = 124 ]; then
		status=failed
		why="the guest did not power off within ${BOOT_TIMEOUT}s (console: $f.console)"
	elif [ $rc != 0 ]; then
		status=failed why="qemu exited with $rc: $(tail -n 1 "$f.qemu")"
	fi
	printf '%s %s %s\n' "$status" "$secs" "$why" > "$f.status"
	say "$rel${part:+ ($part)} done after $secs s"
}

# finish N PATTERN PACKAGE VERSION RELEASE PARTS: row N of RUNS, once the
# kernel's guests are done: a part's sections added to the main guest's
# results (its own "timing" as "timing PART"), a part that failed or did
# not finish failing the kernel, and the randomised rows' predictions and
# the replays the guest asked for made here (host_replays.py says why).
finish() {
	local n=$1 pat=$2 pkg=$3 ver=$4 rel=$5 parts=$6 p status secs why pst psecs pwhy
	read -r status secs why < "$OUT/$rel.status"
	for p in $parts; do
		read -r pst psecs pwhy < "$OUT/$rel.$p.status"
		if [ "$pst" != ran ]; then
			[ "$status" = ran ] && status=failed why="its $p guest: $pwhy"
		elif ! grep -q '^@@THPSIM-DONE@@' "$OUT/$rel.$p.results"; then
			[ "$status" = ran ] && status=failed why="its $p guest did not finish (console: $OUT/$rel.$p.console)"
		fi
		sed -n '/^@@THPSIM-START@@/,/^@@THPSIM-DONE@@/p' "$OUT/$rel.$p.results" |
			sed -e '/^@@THPSIM-START@@/d' -e '/^@@THPSIM-DONE@@/d' \
			    -e "s/^@@THPSIM-BEGIN \(info\|end\|timing\)@@/@@THPSIM-BEGIN \1 $p@@/" \
			    -e "s/^@@THPSIM-END \(info\|end\|timing\) rc=/@@THPSIM-END \1 $p rc=/" \
			>> "$OUT/$rel.results"
		secs="$secs+$psecs"
	done
	[ "$status" = ran ] && python3 "$HERE/host_replays.py" "$OUT/$rel.results" "$S/thpsim"
	RUNS=$OUT/row.$n run_row "$pat" "$pkg" "$ver" "$status" "$secs" "$OUT/$rel.results" "$why"
}

# ---- the guests ----
# Every kernel fetched first (one apt at a time), then the guests booted,
# KERNEL_JOBS at once: each is one vCPU of TCG, about one host CPU (two
# 6.1 and 6.12 guests side by side, alone on 2 CPUs, took 281 s and 515 s
# where one at a time beside make check's host stages took 255 s and 515 s,
# 2026-12-07).  The 6.12 guest's randomised runs (tools/kernels/init) go to
# a guest of their own, booted after the others, so that the longest guest
# is shorter: 6.12's are the only randomised rows.
first=()
jobs_list=()
late=()
n=0
for pat in $KERNEL_PACKAGES; do
	n=$((n + 1))
	if ! got=$(fetch "$pat" 2>"$OUT/fetch.err"); then
		RUNS=$OUT/row.$n run_row "$pat" "-" "-" skipped 0 "-" "$(tail -n 1 "$OUT/fetch.err")"
		say "skipped $pat: $(tail -n 1 "$OUT/fetch.err")"
		continue
	fi
	cat "$OUT/fetch.err" >&2
	read -r pkg ver dir <<< "$got"
	rel=$(cat "$dir/release")
	if ! initramfs "$rel" "$dir/config"; then
		echo "check-kernels: cannot build the initramfs" >&2
		exit 2
	fi
	parts=
	if [ "$KERNEL_SPLIT" = 1 ] && [ -z "$KERNEL_EXTRA" ]; then
		case $rel in 6.12.*) parts=randomised ;; esac
	fi
	echo "$n $pat $pkg $ver $rel ${parts:--}" >> "$OUT/kernels.list"
	if [ -n "$parts" ]; then
		first+=("$rel $dir main")
	else
		jobs_list+=("$rel $dir")
	fi
	for p in $parts; do late+=("$rel $dir $p"); done
done
# The longest first, so that the last to finish is a short one: the main
# guest of a kernel with parts (6.12's, 453 s beside the host's stages),
# then the others newest first (6.18's 364 s: a newer kernel runs the
# mTHP and DAMON rows that 6.1, 312 s, skips), then the parts (150 s).
# In the patterns' order 6.1 and 6.18 ran one after the other while the
# 6.12 guest's two parts had finished 73 s before (2026-12-07).
mapfile -t jobs_list < <(printf '%s\n' "${jobs_list[@]}" | sort -V -r -k1,1 | grep .)
for job in "${first[@]}" "${jobs_list[@]}" "${late[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$KERNEL_JOBS" ]; do
		wait -n
	done
	read -r rel dir part <<< "$job"
	say "booting $rel${part:+ ($part)}"
	boot "$rel" "$dir" "$part" &
done
wait
if [ -f "$OUT/kernels.list" ]; then
	while read -r kn kpat kpkg kver krel kparts; do
		[ "$kparts" = - ] && kparts=
		finish "$kn" "$kpat" "$kpkg" "$kver" "$krel" "$kparts"
	done < "$OUT/kernels.list"
fi
for i in $(seq 1 "$n"); do
	cat "$OUT/row.$i" >> "$RUNS"
done
if [ -n "$KERNEL_EXTRA" ]; then # by hand: the script's output, no checks
	for f in "$OUT"/*.results; do
		echo "== ${f##*/}"
		sed -n '/^@@THPSIM-BEGIN extra@@/,/^@@THPSIM-END extra/p' "$f"
	done
	exit 0
fi
summarize
