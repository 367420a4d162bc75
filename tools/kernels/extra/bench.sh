# bench.sh: thpsim bench, whole, in a guest (a measurement by hand, not a
# check).  Its access sampling section needs DAMON's virtual-address
# monitoring with no kdamond of anyone else's, which a host that runs DAMON
# itself (Debian's 6.18 starts damon_stat) cannot give; Debian's 6.12 can.
# On a clock that counts the guest's instructions, so that TCG's pace does
# not enter the times (docs/performance.md, "Counted in instructions"):
#
#   KERNEL_QEMU_ARGS="-icount shift=0,sleep=off" BOOT_TIMEOUT=3000 \
#   KERNEL_EXTRA=$PWD/tools/kernels/extra/bench.sh \
#   KERNEL_PACKAGES="linux-image-6.12.*+deb12-amd64-unsigned" make check-kernels
#
# About 3 minutes of this machine's time (2026-12-07).
echo "kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
/thpsim bench 2>&1
