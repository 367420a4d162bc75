# global-pressure.sh: the "Global pressure" row of tools/kernels/init
# (global-always: tests/progs/sparse under THP always on a machine with
# about 300 MiB free and no cgroup limit) run RUNS times in a row, each
# time as it stands, after 3 s more, and after compact_memory, with what
# the kernel had free (MemFree, the buddy lists, the per-CPU lists'
# count), the blocks usable.awk gives the replay, what reclaim and
# compaction did during the run (vmstat), and the replay's figures.  A
# measurement by hand, not a check:
#
#   KERNEL_EXTRA=$PWD/tools/kernels/extra/global-pressure.sh \
#   KERNEL_PACKAGES="linux-image-6.1.0-*-amd64-unsigned" make check-kernels
RUNS=${RUNS:-3}
thp=/sys/kernel/mm/transparent_hugepage
echo always > $thp/enabled
/thpsim record -o /tmp/g.trace -- /progs/sparse --progress /tmp/p > /tmp/g.rec 2>&1 || cat /tmp/g.rec
bud() { awk '{ p = 1; for (o = 0; o + 5 <= NF; o++) { s += $(o + 5) * p; p *= 2 } } END { print s * 4 }' /proc/buddyinfo; }
pcp() { awk '$1 == "count:" { s += $2 } END { print s * 4 }' /proc/zoneinfo; }
mi() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
snap() { grep -E '^(thp_fault|compact_|pgsteal|pgscan|oom_kill|slabs_scanned|allocstall|kswapd|drop_|pgfree|workingset|nr_free_pages|pgmigrate)' /proc/vmstat > $1; }
i=1
while [ $i -le $RUNS ]; do
  for how in plain sleep compact; do
	free=$(mi MemFree)
	echo $(( (free - 300 * 1024) / 2048 )) > /proc/sys/vm/nr_hugepages
	sync; echo 2 > /proc/sys/vm/drop_caches
	[ $how = sleep ] && sleep 3
	[ $how = compact ] && echo 1 > /proc/sys/vm/compact_memory
	echo "== run $i $how: MemFree $(mi MemFree) buddy $(bud) pcp $(pcp) SReclaimable $(mi SReclaimable) SUnreclaim $(mi SUnreclaim) PageTables $(mi PageTables) Cached $(mi Cached) Shmem $(mi Shmem)"
	echo "   buddyinfo: $(awk '{ s = ""; for (o = 5; o <= NF; o++) s = s " " $o; print $4 ":" s }' /proc/buddyinfo | tr '\n' ';')"
	usable=$(awk -f /usable.awk /proc/zoneinfo /proc/buddyinfo)
	pc=$(pcp)
	echo "   usable $usable"
	snap /tmp/v0
	rm -f /tmp/p
	/progs/sparse --progress /tmp/p > /tmp/out 2>&1
	rc=$?
	snap /tmp/v1
	echo "   kernel: rc $rc progress $(tr -d '\000' < /tmp/p 2>/dev/null) $(awk '$1 == "AnonHugePages:" || $1 == "Anonymous:" { printf "%s %s ", $1, $2 }' /tmp/out)"
	echo "   vmstat: $(awk 'NR == FNR { v[$1] = $2; next } ($2 - v[$1]) != 0 { printf "%s %d ", $1, $2 - v[$1] }' /tmp/v0 /tmp/v1)"
	echo "   MemFree after $(mi MemFree) buddy $(bud) pcp $(pcp)"
	/thpsim replay /tmp/g.trace --format json --quiet --layouts 1 --free-blocks ${usable#* } > /tmp/r.json 2>/tmp/r.err || cat /tmp/r.err
	echo "   model: $(for k in thp_fault_alloc thp_fault_fallback share_of_trace_pct; do
		grep -m1 "\"$k\": [0-9]" /tmp/r.json; done | tr -d ' \n')"
	b=${usable#* }
	/thpsim replay /tmp/g.trace --format json --quiet --layouts 1 \
		--free-blocks $((${b%%,*} + pc / 4)),${b#*,} > /tmp/r.json 2>/tmp/r.err || cat /tmp/r.err
	echo "   model with the per-CPU lists' pages: $(for k in thp_fault_alloc thp_fault_fallback share_of_trace_pct; do
		grep -m1 "\"$k\": [0-9]" /tmp/r.json; done | tr -d ' \n')"
	echo 0 > /proc/sys/vm/nr_hugepages
  done
  i=$((i + 1))
done
