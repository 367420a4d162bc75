/*
 * test_thp.c - real THPs and the huge zero page under fork, munmap,
 * MADV_DONTNEED, MADV_FREE, mprotect, mremap, prctl and small VMAs.
 *
 * Each test is one scenario of docs/kernel-observations.md (named S<n>),
 * observed on a Linux 6.18 host; the expected figures are the kernel's.
 */
#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)

static thps_proc *region(uint64_t len, uint64_t *a)
{
	thps_proc *p = tproc();

	*a = tmmap_aligned(p, len);
	tmadvise(p, *a, len, THPS_MADV_HUGEPAGE);
	return p;
}

/* A real process already has the upper page-table levels around its
 * mappings (the probe's baseline VmPTE was 40 kB): make them exist by
 * touching a page just below a, so VmPTE deltas count what the kernel's do. */
static void warm_tables(thps_proc *p, uint64_t a)
{
	uint64_t w = tmmap(p, a - PAGE, PAGE, RW,
			   THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | THPS_MAP_FIXED_NOREPLACE);

	twrite(p, w, 1, 1, 1);
}

/* S9a: fork after a THP write; the parent's write splits only its own PMD
 * and copies 4 KiB; when the child (the last PMD mapper) exits the folio is
 * partially mapped; the shrinker splits it and zero-filled pages become the
 * zero page: Rss 2048 -> 8 kB. */
TEST(thp_fork_parent_cow_then_deferred_split)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, 1, 1, 0x11);
	c = tfork(p);
	ASSERT_EQ(fig(c, THPS_PROC_AnonHugePages), 2048);
	vm_mark();
	twrite(p, a + PAGE, 1, 1, 0x22);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_Pss), 1026);
	ASSERT_EQ(fig(p, THPS_PROC_Private_Dirty), 4);
	ASSERT_EQ(fig(p, THPS_PROC_Shared_Dirty), 2044);
	ASSERT_EQ(fig(c, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(c, THPS_PROC_Pss), 1026);
	tread(c, a, 1, 1, 0x11);
	tread(c, a + PAGE, 1, 1, 0);
	tread(p, a + PAGE, 1, 1, 0x22);
	texit(c);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 1);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_transparent_hugepages), -1);
	tdrop_caches();
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 8);
	ASSERT(tpage(p, a + 2 * PAGE).zero_page);
	tread(p, a, 1, 1, 0x11);
	tread(p, a + PAGE, 1, 1, 0x22);
	tread(p, a + 2, MB(2) - 2 * PAGE - 2, PAGE, 0);
	texit(p);
	tdrop_caches();
}

/* S9b: the child writes; its PMD splits; the parent keeps the PMD, so no
 * deferred split happens when the child exits. */
TEST(thp_fork_child_cow_parent_keeps_pmd)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, 1, 1, 0x11);
	c = tfork(p);
	vm_mark();
	twrite(c, a + PAGE, 1, 1, 0x33);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(fig(c, THPS_PROC_AnonHugePages), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	texit(c);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 0);
	tdrop_caches();
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT(tpage(p, a).huge && !tpage(p, a).writable);
	/* the only mapper again: the write reuses the THP in place */
	twrite(p, a + PAGE, 1, 1, 0x44);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT(tpage(p, a).huge && tpage(p, a).writable);
	texit(p);
}

/* Linux 3.8-5.7 (thpsim/thp_cow=copy): the writer copies the whole THP. */
TEST(thp_fork_cow_copy_under_3_8)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, "thpsim/kernel=3.8", NULL);
	p = region(MB(2), &a);
	twrite(p, a, MB(2), PAGE, 0x11);
	c = tfork(p);
	vm_mark();
	twrite(p, a + PAGE, 1, 1, 0x22);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(c, THPS_PROC_AnonHugePages), 2048);
	ASSERT_NE(tpage(p, a).pfn, tpage(c, a).pfn);
	tread(p, a + 2 * PAGE, MB(2) - 2 * PAGE, PAGE, 0x11);
	tread(c, a + PAGE, 1, 1, 0x11);
	tread(p, a + PAGE, 1, 1, 0x22);
	texit(c);
	texit(p);
}

/* S11b: mprotect of 4 KiB inside a THP splits the PMD, not the folio; the
 * other subpages stay writable (no fault). */
TEST(thp_partial_mprotect_splits_pmd)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, 1, 1, 1);
	vm_mark();
	tmprotect(p, a + PAGE, PAGE, THPS_PROT_READ);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 0);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_transparent_hugepages), -1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	twrite(p, a + MB(1), 1, 1, 2);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
	ASSERT_EQ(thps_write(p, a + PAGE, "x", 1), -EFAULT);
	tread(p, a + PAGE, 1, 1, 0);
	texit(p);
}

/* PROT_NONE keeps a THP mapped by its PMD (pmd_modify keeps PSE). */
TEST(thp_prot_none_keeps_pmd)
{
	thps_proc *p;
	uint64_t a;
	uint8_t b;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, 1, 1, 5);
	tmprotect(p, a, MB(2), THPS_PROT_NONE);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(thps_read(p, a, &b, 1), -EFAULT);
	tmprotect(p, a, MB(2), RW);
	tread(p, a, 1, 1, 5);
	texit(p);
}

/* S12: MADV_DONTNEED of a whole 2 MiB zaps the PMD without a split and
 * frees its deposited table and the THP. */
TEST(thp_dontneed_whole_pmd)
{
	thps_proc *p;
	uint64_t a, pte;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	warm_tables(p, a);
	vm_mark();
	pte = fig(p, THPS_PROC_VmPTE);
	twrite(p, a, MB(2), PAGE, 0x77);
	ASSERT_EQ(fig(p, THPS_PROC_VmPTE), pte + 4);
	tmadvise(p, a, MB(2), THPS_MADV_DONTNEED);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4); /* the warm-up page */
	ASSERT_EQ(fig(p, THPS_PROC_VmPTE), pte);
	ASSERT_EQ(fig(p, THPS_PROC_VmHWM), 2048 + 4);
	tread(p, a, MB(2), PAGE, 0);
	ASSERT(tpage(p, a).huge_zero);
	texit(p);
}

/* S13b: MADV_DONTNEED of 4 KiB of a THP: split PMD, deferred split at
 * once; the shrinker splits the folio; Rss stays 2044 (no zero pages). */
TEST(thp_dontneed_4k_of_thp)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, MB(2), 1, 0x77);
	vm_mark();
	tmadvise(p, a, PAGE, THPS_MADV_DONTNEED);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 1);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), -1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2044);
	tread(p, a, 1, 1, 0);
	tread(p, a + PAGE, 1, 1, 0x77);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 1);
	tdrop_caches();
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2044);
	tread(p, a + PAGE, MB(2) - PAGE, 1, 0x77);
	texit(p);
}

/* S14b: munmap of the first 1 MiB of a THP. */
TEST(thp_munmap_half)
{
	thps_proc *p;
	uint64_t a, free_before;
	uint64_t mi[THPS_NR_MEMINFO_ITEMS];

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, MB(2), 1, 0x77);
	vm_mark();
	tmunmap(p, a, MB(1));
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 1);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), -256);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 1024);
	/* the unmapped half is still allocated until the shrinker runs */
	thps_meminfo(T, mi);
	free_before = mi[THPS_MEM_MemFree];
	tdrop_caches();
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 1);
	thps_meminfo(T, mi);
	ASSERT_EQ(mi[THPS_MEM_MemFree], free_before + 1024);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 1024);
	tread(p, a + MB(1), MB(1), 1, 0x77);
	texit(p);
}

/* S19: four THPs in 8 MiB; munmap 1 MiB straddling THP #1 and #2 splits two
 * PMDs, queues two folios; the shrinker leaves 4100 kB. */
TEST(thp_munmap_straddling_two_thps)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = region(MB(8), &a);
	twrite(p, a, MB(8), MB(2), 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 8192);
	vm_mark();
	tmunmap(p, a + MB(3) + MB(1) / 2, MB(1));
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 2);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 7168);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	tdrop_caches();
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_underused_split_page), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4100);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	texit(p);
}

/* S15a-d: mremap to an aligned destination moves the PMD; to an unaligned
 * one it splits, and the destination needs one more table. */
TEST(thp_mremap_aligned_and_unaligned)
{
	for (int thp = 0; thp < 2; thp++) {
		for (int unaligned = 0; unaligned < 2; unaligned++) {
			thps_proc *p;
			uint64_t a, dst, res, pfn, pte;

			tmachine(64, NULL);
			p = region(MB(2), &a);
			dst = tmmap_aligned(p, MB(6));
			tmprotect(p, dst, MB(6), THPS_PROT_NONE);
			dst += MB(2) + (unaligned ? PAGE : 0);
			if (thp)
				twrite(p, a, MB(2), 1, 0x77);
			else
				tread(p, a, MB(2), PAGE, 0);
			pfn = tpage(p, a).pfn;
			pte = fig(p, THPS_PROC_VmPTE);
			vm_mark();
			ASSERT_OK(thps_mremap(p, a, MB(2), MB(2),
					      THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED, dst, &res));
			tcheck();
			ASSERT_EQ(res, dst);
			ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), unaligned);
			ASSERT_EQ(fig(p, THPS_PROC_VmPTE), pte + (unaligned ? 4 : 0));
			ASSERT_EQ(fig(p, THPS_PROC_Rss), thp ? 2048 : 0);
			ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), thp && !unaligned ? 2048 : 0);
			if (!unaligned)
				ASSERT_EQ(tpage(p, dst).pfn, pfn);
			tread(p, dst, MB(2), PAGE, thp ? 0x77 : 0);
			twrite(p, dst + 2 * PAGE, 1, 1, 9);
			ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), !thp && !unaligned);
			ASSERT_EQ(thps_read(p, a, &res, 1), -EFAULT);
			texit(p);
		}
	}
}

/* S16/S17: MADV_NOHUGEPAGE and PR_SET_THP_DISABLE: 4 KiB pages only, and
 * no huge zero page; PR_THP_DISABLE_EXCEPT_ADVISED is not modelled here. */
TEST(thp_nohugepage_and_prctl_disable)
{
	for (int how = 0; how < 2; how++) {
		thps_proc *p;
		uint64_t a;

		tmachine(64, "transparent_hugepage/enabled=always", NULL);
		p = tproc();
		a = tmmap_aligned(p, MB(4));
		if (how == 0)
			tmadvise(p, a, MB(4), THPS_MADV_NOHUGEPAGE);
		else
			ASSERT_OK(thps_prctl_thp_disable(p, 1));
		tread(p, a, MB(4), PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_pgfault), 1024);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);
		twrite(p, a, MB(4), PAGE, 1);
		ASSERT_EQ(fig(p, THPS_PROC_Rss), 4096);
		ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
		texit(p);
	}
}

/* S6: a VMA holding no aligned 2 MiB gets 4 KiB pages and no
 * thp_fault_fallback (no attempt is made). */
TEST(thp_vma_too_small_for_a_pmd)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(4));
	tmunmap(p, a, MB(1) / 2);
	tmunmap(p, a + MB(3) + MB(1) / 2, MB(1) / 2);
	tmadvise(p, a + MB(1) / 2, MB(3), THPS_MADV_HUGEPAGE);
	/* [a+512K, a+3.5M) holds one aligned 2 MiB: [a+2M, a+4M)? no: a+3.5M
	 * ends first, so none */
	tread(p, a + MB(1) / 2, MB(3), PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 768);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), 0);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);
	twrite(p, a + MB(1), 1, 1, 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
	texit(p);
}

/* S20: MADV_FREE is a no-op on the huge zero page; on a THP the whole-range
 * advice keeps the PMD and cleans it; 4 KiB of it splits PMD and folio. */
TEST(thp_madv_free)
{
	thps_proc *p;
	uint64_t a, pfn;

	tmachine(64, NULL);
	p = region(MB(2), &a);
	tread(p, a, MB(2), PAGE, 0);
	pfn = tpage(p, a).pfn;
	tmadvise(p, a, MB(2), THPS_MADV_FREE);
	tmadvise(p, a, PAGE, THPS_MADV_FREE);
	ASSERT_EQ(tpage(p, a).pfn, pfn);
	ASSERT(tpage(p, a).huge_zero);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
	texit(p);

	tmachine(64, NULL);
	p = region(MB(2), &a);
	twrite(p, a, MB(2), 1, 0x77);
	ASSERT_EQ(fig(p, THPS_PROC_Private_Dirty), 2048);
	tmadvise(p, a, MB(2), THPS_MADV_FREE);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_Private_Clean), 2048);
	vm_mark();
	tmadvise(p, a, PAGE, THPS_MADV_FREE);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	tread(p, a, MB(2), 1, 0x77);
	tdrop_caches();
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	texit(p);
}

/* S21: VmPTE: +4 kB per 2 MiB whether mapped by PMD (deposited table) or by
 * PTEs; a whole-range MADV_DONTNEED frees both kinds (PT_RECLAIM). */
TEST(thp_vmpte_accounting)
{
	for (int c = 0; c < 4; c++) {
		thps_proc *p;
		uint64_t a, base;
		int huge = c & 1, write = c & 2;

		tmachine(64, NULL);
		p = tproc();
		a = tmmap_aligned(p, MB(4));
		if (huge)
			tmadvise(p, a, MB(4), THPS_MADV_HUGEPAGE);
		warm_tables(p, a);
		base = fig(p, THPS_PROC_VmPTE);
		if (write)
			twrite(p, a, MB(4), PAGE, 1);
		else
			tread(p, a, MB(4), PAGE, 0);
		ASSERT_EQ(fig(p, THPS_PROC_VmPTE), base + 8);
		tmadvise(p, a, MB(4), THPS_MADV_DONTNEED);
		ASSERT_EQ(fig(p, THPS_PROC_VmPTE), base);
		tmunmap(p, a, MB(4));
		texit(p);
	}
}
