/*
 * errno-probe: what the running kernel answers to the edge cases of mmap,
 * munmap, mprotect, madvise and mremap that the reference model of
 * tests/fuzz (ref.c) decides.  Original code written for thpsim.
 *
 * Build:  gcc -O1 -Wall -o errno-probe errno-probe.c
 * Run:    ./errno-probe      (any user; it changes nothing outside itself)
 *
 * Each case starts from a fresh layout: [a, a+2M) read-write and
 * [a+2M, a+4M) read-only, two VMAs, with nothing mapped around them.  The
 * system calls are made with syscall(2), so glibc changes nothing.  One
 * line per case: its name, then "ok" or the errno name, then what is mapped
 * afterwards where that matters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MB(x) ((unsigned long)(x) << 20)
#define PG 4096UL

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	long r = syscall(nr, a, b, c, d, e, f);

	return r == -1 ? -errno : r;
}
static long xmmap(unsigned long addr, unsigned long len, long prot, long flags)
{
	return sys(SYS_mmap, (long)addr, (long)len, prot, flags, -1, 0);
}
static long xmremap(unsigned long a, unsigned long ol, unsigned long nl, long fl, unsigned long na)
{
	return sys(SYS_mremap, (long)a, (long)ol, (long)nl, fl, (long)na, 0);
}
static const char *res(long r)
{
	return r < 0 && r > -4096 ? strerrorname_np((int)-r) : "ok";
}
static int mapped(unsigned long p)
{
	return sys(SYS_madvise, (long)p, PG, MADV_NORMAL, 0, 0, 0) == 0;
}

static unsigned long base;

/* A fresh two-VMA layout at the same place each time. */
static unsigned long setup(void)
{
	if (!base) {
		base = (unsigned long)xmmap(0, MB(16), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
		base = (base + MB(2) - 1) & ~(MB(2) - 1);
	}
	sys(SYS_munmap, (long)base, (long)MB(12), 0, 0, 0, 0);
	xmmap(base, MB(4), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
	sys(SYS_mprotect, (long)(base + MB(2)), (long)MB(2), PROT_READ, 0, 0, 0);
	return base;
}

#define CASE(name, expr) printf("%-44s %s\n", name, res(expr))

int main(void)
{
	unsigned long a, d;
	long r;

	setvbuf(stdout, NULL, _IONBF, 0);
	a = setup();
	CASE("mmap len 0", xmmap(0, 0, 3, 0x22));
	CASE("mmap len 2^63", xmmap(0, 1UL << 63, 3, 0x22));
	CASE("mmap len -1", xmmap(0, ~0UL, 3, 0x22));
	CASE("mmap prot 0x80", xmmap(0, PG, 0x83, 0x22));
	CASE("mmap PROT_SEM", xmmap(0, PG, 0x8 | 3, 0x22));
	CASE("mmap fixed unaligned", xmmap(a + 1, PG, 3, 0x32));
	CASE("mmap fixed|noreplace on mapped", xmmap(a, PG, 3, 0x22 | MAP_FIXED | MAP_FIXED_NOREPLACE));
	a = setup();
	r = xmmap(a + MB(4) + 1, PG, 3, 0x22);
	printf("%-44s %s, at the hint rounded down: %d\n", "mmap hint unaligned free", res(r),
	       (unsigned long)r == a + MB(4));
	r = xmmap(~0UL & ~(PG - 1), 2 * PG, 3, 0x22);
	printf("%-44s %s, below TASK_SIZE: %d\n", "mmap hint near 2^64", res(r),
	       r > 0 && (unsigned long)r < 0x7ffffffff000UL);

	a = setup();
	CASE("munmap unaligned", sys(SYS_munmap, (long)a + 1, PG, 0, 0, 0, 0));
	CASE("munmap len 0", sys(SYS_munmap, (long)a, 0, 0, 0, 0, 0));
	CASE("munmap len -1", sys(SYS_munmap, (long)a, -1, 0, 0, 0, 0));
	CASE("munmap past TASK_SIZE", sys(SYS_munmap, 0x7ffffffff000L, 2 * PG, 0, 0, 0, 0));

	CASE("mprotect len 0 bad prot", sys(SYS_mprotect, (long)a, 0, 0x80, 0, 0, 0));
	CASE("mprotect len 0 unaligned", sys(SYS_mprotect, (long)a + 1, 0, 1, 0, 0, 0));
	CASE("mprotect len wraps to 0", sys(SYS_mprotect, (long)a, -101, 1, 0, 0, 0));
	CASE("mprotect PROT_SEM", sys(SYS_mprotect, (long)a, PG, 0x8 | 1, 0, 0, 0));
	CASE("mprotect 0x10", sys(SYS_mprotect, (long)a, PG, 0x10, 0, 0, 0));
	CASE("mprotect hole", sys(SYS_mprotect, (long)a, (long)MB(5), 1, 0, 0, 0));
	CASE("mprotect past TASK_SIZE bad prot", sys(SYS_mprotect, 0x7ffffffff000L, 2 * PG, 0x10, 0, 0, 0));

	CASE("madvise len 0 bad advice", sys(SYS_madvise, (long)a, 0, 12345, 0, 0, 0));
	CASE("madvise len wraps to 0", sys(SYS_madvise, (long)a, -101, MADV_DONTNEED, 0, 0, 0));
	CASE("madvise range wraps", sys(SYS_madvise, -4096L, 2 * PG, MADV_DONTNEED, 0, 0, 0));
	CASE("madvise past TASK_SIZE", sys(SYS_madvise, 0x7ffffffff000L, 2 * PG, MADV_HUGEPAGE, 0, 0, 0));
	CASE("madvise above TASK_SIZE", sys(SYS_madvise, 0x800000000000L, 2 * PG, MADV_DONTNEED, 0, 0, 0));
	CASE("madvise hole NORMAL", sys(SYS_madvise, (long)a, (long)MB(5), MADV_NORMAL, 0, 0, 0));
	sys(SYS_mprotect, (long)a, PG, PROT_NONE, 0, 0, 0);
	CASE("madvise prot-none DONTNEED", sys(SYS_madvise, (long)a, PG, MADV_DONTNEED, 0, 0, 0));

	a = setup();
	CASE("mremap new_len 0", xmremap(a, PG, 0, 0, 0));
	CASE("mremap old_len 0 grow", xmremap(a, 0, PG, MREMAP_MAYMOVE, 0));
	CASE("mremap grow to 2^62", xmremap(a, PG, 1UL << 62, MREMAP_MAYMOVE, 0));
	CASE("mremap same size 2^62", xmremap(a, 1UL << 62, 1UL << 62, 0, 0));
	a = setup();
	CASE("mremap garbage new_addr without FIXED", xmremap(a, PG, 2 * PG, MREMAP_MAYMOVE, ~0UL << 20));
	a = setup();
	r = xmremap(a + MB(1), MB(2), PG, 0, 0);
	printf("%-44s %s, tail in the 2nd VMA unmapped: %d\n", "mremap shrink across 2 VMAs", res(r),
	       !mapped(a + MB(2) + PG));
	a = setup();
	CASE("mremap same size across 2 VMAs", xmremap(a + MB(1), MB(2), MB(2), 0, 0));
	a = setup();
	CASE("mremap grow across 2 VMAs", xmremap(a + MB(1), MB(2), MB(3), MREMAP_MAYMOVE, 0));
	a = setup();
	CASE("mremap grow middle of a VMA, no move", xmremap(a, PG, 2 * PG, 0, 0));
	a = setup();
	d = a + MB(6);
	xmmap(d, MB(4), 3, 0x32);
	sys(SYS_munmap, (long)(a + MB(2)), PG, 0, 0, 0, 0);
	r = xmremap(a + MB(1), MB(2), MB(2), MREMAP_MAYMOVE | MREMAP_FIXED, d);
	printf("%-44s %s, dest under the source gap still mapped: %d, 2nd VMA moved: %d\n",
	       "mremap fixed same size across a gap", res(r), mapped(d + MB(1)), mapped(d + MB(1) + PG));
	a = setup();
	d = a + MB(6);
	xmmap(d, MB(4), 3, 0x32);
	sys(SYS_munmap, (long)a, PG, 0, 0, 0, 0);
	CASE("mremap fixed same size, gap at the start", xmremap(a, 2 * PG, 2 * PG, 3, d));
	a = setup();
	d = a + MB(6);
	xmmap(d, MB(4), 3, 0x32);
	r = xmremap(a + MB(1), MB(2), MB(1) + 2 * PG, 3, d);
	printf("%-44s %s, dest still mapped: %d\n", "mremap fixed shrink still across 2 VMAs", res(r),
	       mapped(d));
	a = setup();
	CASE("mremap fixed overlap", xmremap(a, 2 * PG, 2 * PG, 3, a + PG));
	CASE("mremap fixed without MAYMOVE", xmremap(a, PG, PG, MREMAP_FIXED, a + MB(6)));
	return 0;
}
