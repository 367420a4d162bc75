# access-overhead.sh: what recording with DAMON's access samples costs
# (issue 25: thpsim record --access at most 1.3x thpsim record), measured
# in a guest whose kernel has DAMON's virtual-address monitoring, since a
# host that runs DAMON already (Debian's 6.18 starts damon_stat) cannot
# measure it.  A measurement by hand, not a check:
#
#   KERNEL_EXTRA=tools/kernels/extra/access-overhead.sh KERNEL_SMP=2 \
#   KERNEL_PACKAGES="linux-image-6.12.*+deb12-amd64-unsigned" make check-kernels
#
# Under TCG the guest's clock is the host's, and TCG's pace varies: plain
# record alone spread from 0.86 to 2.48 s in one guest.  With
# KERNEL_QEMU_ARGS="-icount shift=0,sleep=off" the guest's clock counts its
# instructions instead (1 ns each: a 1 GIPS CPU, slower than any machine
# this is for), and the same runs agree to 2%: a measurement, not noise.
#
# As thpsim bench does it on a host: tests/progs/hotcold (32 MiB written,
# then passes over its hot 8 MiB) with as many passes as take about RUN_S
# seconds bare, then record and record --access in turns, RUNS of each;
# prints each time, the medians and their ratio.
RUN_S=${RUN_S:-4}
RUNS=${RUNS:-9}
prog=/progs/hotcold
now() { cut -d' ' -f1 /proc/uptime; }
timed() { # COMMAND...: seconds
	t0=$(now)
	"$@" > /dev/null 2>&1 || echo "failed: $*" >&2
	t1=$(now)
	echo "$t0 $t1" | awk '{ printf "%.2f\n", $2 - $1 }'
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
[ -x $prog ] || { echo "no $prog"; exit 1; }
probe=$(timed $prog --passes 100)
passes=$(echo "$probe $RUN_S" | awk '{ p = $1 > 0 ? int(100 * $2 / $1) : 1000; print p < 100 ? 100 : p }')
echo "passes $passes (100 passes took $probe s bare)"
echo "bare $(timed $prog --passes $passes)"
plain= acc=
i=1
while [ $i -le $RUNS ]; do
	a=$(timed /thpsim record -q --force -o /tmp/ov.trace -- $prog --passes $passes)
	b=$(timed /thpsim record -q --access --force -o /tmp/ov.trace -- $prog --passes $passes)
	how=$(/thpsim trace dump /tmp/ov.trace --header 2>/dev/null | sed -n 's/^access=//p')
	echo "run $i: record $a s, record --access $b s (access=$how)"
	plain="$plain $a" acc="$acc $b"
	i=$((i + 1))
done
mp=$(echo "$plain" | median)
ma=$(echo "$acc" | median)
echo "median record $mp s, record --access $ma s: $(echo "$ma $mp" | awk '{ printf "%.2f", $1 / $2 }')x (goal: at most 1.3x)"
rm -f /tmp/ov.trace
