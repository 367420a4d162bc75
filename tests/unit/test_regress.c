/*
 * test_regress.c - model bugs the differential soak and the fuzzers found
 * (tests/fuzz), one test each, with the sequence reduced by hand to what
 * matters.  Expected answers come from Linux: its source, or what the
 * running kernel answered to tools/kernel-probe/errno-probe.c (quoted).
 */
#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ANON (THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS)

/*
 * Direct reclaim inside a copy-on-write fault ran the deferred-split
 * shrinker, which split the very THP the fault was copying from and
 * remapped the zero-filled subpage under the fault to the zero page; the
 * fault then dropped a mapping that was gone (VM_BUG_ON mapcount < 0).
 * Linux's fault holds a reference on the old folio, so split_folio fails
 * (can_split_folio).  Found by "thpsim-soak --seed 1", run 278.
 */
TEST(regress_reclaim_in_cow_fault_does_not_split_the_source)
{
	thps_proc *p, *c, *q;
	uint64_t a, b;
	struct thps_touch t = { .step = PAGE, .op = THPS_TOUCH_WRITE, .value = 5 };
	uint8_t byte = 0x77;

	tmachine(16, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, 1, 1, 1); /* one THP, every other byte zero */
	ASSERT(tpage(p, a).huge);
	c = tfork(p);
	/* fill memory until an allocation fails */
	q = tproc();
	b = tmmap(q, 0, MB(32), RW, ANON);
	tmadvise(q, b, MB(32), THPS_MADV_NOHUGEPAGE);
	t.addr = b;
	t.len = MB(32);
	ASSERT_EQ(thps_touch(q, &t), -ENOMEM);
	tcheck();
	/* both unmap one subpage: the THP is partially mapped and queued */
	tmunmap(p, a + MB(1), PAGE);
	tmunmap(c, a + MB(1), PAGE);
	ASSERT_EQ(vm(THPS_VM_thp_deferred_split_page), 1);
	/* a write to a zero-filled shared subpage copies it; reclaim runs and
	 * may not take the THP from under the fault: it has nothing else to
	 * free, so the write fails cleanly */
	ASSERT_EQ(thps_write(p, a + PAGE, &byte, 1), -ENOMEM);
	tcheck();
	/* the THP is still there for the shrinker once the fault is over */
	tdrop_caches();
	ASSERT_EQ(vm(THPS_VM_thp_split_page), 1);
	ASSERT_OK(thps_write(p, a + PAGE, &byte, 1));
	tcheck();
	ASSERT_EQ(tbyte(p, a + PAGE), 0x77);
	ASSERT_EQ(tbyte(c, a + PAGE), 0);
	ASSERT_EQ(tbyte(p, a), 1);
	texit(q);
	texit(c);
	texit(p);
	tdrop_caches();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), tmeminfo(THPS_MEM_MemTotal));
}

/*
 * mmap hints and protection bits.  Observed: "mmap hint unaligned free: ok,
 * at the hint rounded down" (x86's arch_get_unmapped_area_topdown does
 * addr &= PAGE_MASK; the model rounded up), "mmap hint near 2^64: ok,
 * below TASK_SIZE" (the model took the hint: its end wrapped past 2^64),
 * "mmap prot 0x80: ok", "mmap PROT_SEM: ok" (calc_vm_prot_bits ignores
 * other bits; the model refused them).
 */
TEST(regress_mmap_hint_and_prot)
{
	thps_proc *p;
	uint64_t a, b;
	uint8_t byte = 1;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	tmunmap(p, a, MB(1));
	ASSERT_OK(thps_mmap(p, a + 1, PAGE, RW, ANON, &b));
	ASSERT_EQ(b, a);
	ASSERT_OK(thps_mmap(p, ~0ULL & ~(PAGE - 1), 2 * PAGE, RW, ANON, &b));
	ASSERT(b + 2 * PAGE <= (1ULL << 47) - PAGE);
	ASSERT_OK(thps_mmap(p, 0, PAGE, 0x80 | RW, ANON, &b));
	ASSERT_OK(thps_write(p, b, &byte, 1));
	ASSERT_OK(thps_mmap(p, 0, PAGE, 0x8 | THPS_PROT_READ, ANON, &b));
	ASSERT_EQ(thps_write(p, b, &byte, 1), -EFAULT);
	tcheck();
	texit(p);
}

/*
 * The order of mprotect's and madvise's argument checks (do_mprotect_pkey,
 * is_valid_madvise).  Observed: "mprotect len 0 bad prot: ok", "mprotect
 * len wraps to 0: ENOMEM", "mprotect PROT_SEM: ok", "mprotect past
 * TASK_SIZE bad prot: EINVAL", "madvise len wraps to 0: EINVAL", "madvise
 * past TASK_SIZE: ENOMEM".  The model checked the bits before the length,
 * took a length that rounds to zero for an empty range, refused PROT_SEM
 * and answered -EINVAL past TASK_SIZE.
 */
TEST(regress_mprotect_madvise_argument_order)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	ASSERT_EQ(thps_mprotect(p, a, 0, 0x80), 0);
	ASSERT_EQ(thps_mprotect(p, a, ~0ULL - 100, THPS_PROT_READ), -ENOMEM);
	ASSERT_EQ(thps_mprotect(p, a, PAGE, 0x8 | THPS_PROT_READ), 0);
	ASSERT_EQ(thps_mprotect(p, 0x7ffffffff000ULL, 2 * PAGE, 0x10), -EINVAL);
	ASSERT_EQ(thps_madvise(p, a, ~0ULL - 100, THPS_MADV_DONTNEED), -EINVAL);
	ASSERT_EQ(thps_madvise(p, 0x7ffffffff000ULL, 2 * PAGE, THPS_MADV_HUGEPAGE), -ENOMEM);
	tcheck();
	texit(p);
}

/* [a, a+2M) read-write and [a+2M, a+4M) read-only: two VMAs, bytes 1 and 2. */
static uint64_t two_vmas(thps_proc *p)
{
	uint64_t a = tmmap_aligned(p, MB(4));

	twrite(p, a, MB(4), PAGE, 1);
	twrite(p, a + MB(2), MB(2), PAGE, 2);
	tmprotect(p, a + MB(2), MB(2), THPS_PROT_READ);
	ASSERT_EQ(tvmas(p), 1 + 1);
	return a;
}

/*
 * mremap as Linux 6.18 does it.  Observed: "mremap shrink across 2 VMAs:
 * ok, tail in the 2nd VMA unmapped", "mremap same size across 2 VMAs: ok",
 * "mremap garbage new_addr without FIXED: ok", "mremap fixed same size
 * across a gap: ok, dest under the source gap still mapped, 2nd VMA moved"
 * (remap_move, 6.17+), "mremap fixed same size, gap at the start: EFAULT",
 * "mremap grow across 2 VMAs: EFAULT".  The model wanted one VMA for every
 * mremap and checked new_addr without MREMAP_FIXED.
 */
TEST(regress_mremap_linux_6_18)
{
	thps_proc *p;
	uint64_t a, d, out;

	tmachine(64, NULL);
	p = tproc();
	a = two_vmas(p);
	ASSERT_OK(thps_mremap(p, a + MB(1), MB(2), MB(2), 0, 0, &out));
	ASSERT_EQ(out, a + MB(1));
	ASSERT_EQ(thps_mremap(p, a + MB(1), MB(2), MB(3), THPS_MREMAP_MAYMOVE, 0, &out), -EFAULT);
	ASSERT_OK(thps_mremap(p, a, PAGE, 2 * PAGE, THPS_MREMAP_MAYMOVE, ~0ULL << 20, &out));
	tcheck();
	texit(p);

	p = tproc();
	a = two_vmas(p);
	ASSERT_OK(thps_mremap(p, a + MB(1), MB(2), PAGE, 0, 0, &out));
	ASSERT_EQ(out, a + MB(1));
	ASSERT_EQ(thps_read(p, a + MB(2) + PAGE, &out, 1), -EFAULT);
	ASSERT_EQ(tbyte(p, a + MB(3)), 2);
	tcheck();
	texit(p);

	/* a move of two VMAs and the gap between them, onto a mapping */
	p = tproc();
	a = two_vmas(p);
	d = a + MB(6);
	ASSERT_EQ(tmmap(p, d, MB(4), RW, ANON | THPS_MAP_FIXED), d);
	twrite(p, d, MB(4), PAGE, 9);
	tmunmap(p, a + MB(2), PAGE);
	ASSERT_OK(thps_mremap(p, a + MB(1), MB(2), MB(2), THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED, d,
			      &out));
	ASSERT_EQ(out, d);
	tcheck();
	ASSERT_EQ(tbyte(p, d), 1);               /* the first VMA's part */
	ASSERT_EQ(tbyte(p, d + MB(1)), 9);       /* under the gap: left alone */
	ASSERT_EQ(tbyte(p, d + MB(1) + PAGE), 2); /* the second VMA's part */
	ASSERT_EQ(tpage(p, d + MB(1) + PAGE).writable, 0);
	ASSERT_EQ(thps_read(p, a + MB(1), &out, 1), -EFAULT);
	ASSERT_EQ(tbyte(p, a), 1);
	ASSERT_EQ(tbyte(p, a + MB(3)), 2);
	/* a range that starts in a hole moves nothing */
	ASSERT_EQ(thps_mremap(p, a + MB(2), 2 * PAGE, 2 * PAGE,
			      THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED, d + MB(8), &out), -EFAULT);
	tcheck();
	texit(p);
}
