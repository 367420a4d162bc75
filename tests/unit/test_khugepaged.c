/*
 * test_khugepaged.c - MADV_COLLAPSE (mm/khugepaged.c): the collapse of
 * 4 KiB pages, zero-page and none entries and a PTE-mapped THP into a
 * PMD-mapped THP, its refusals and errors, allocation failure, and the
 * whole-state checker after every step.
 *
 * The figures are those the 6.18 host measured for the scenarios
 * scenarios/collapse-*.scn (thpsim kernel), and the 6.1 and 6.12 guests
 * for the profile-dependent ones (make check-kernels).
 */
#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)

static int collapse(thps_proc *p, uint64_t a, uint64_t len)
{
	int err = thps_madvise(p, a, len, THPS_MADV_COLLAPSE);

	tcheck();
	return err;
}

/* collapse-4k-pages: sparse pages, no MADV_HUGEPAGE, enabled=madvise. */
TEST(collapse_sparse_pages_fills_the_rest)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(4));
	twrite(p, a, MB(2), KB(8), 7);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 1024);
	ASSERT_EQ(fig(p, THPS_PROC_VmPTE), 4 + 8); /* the PMD and PUD tables too */
	vm_mark();
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc_failed), 0);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_transparent_hugepages), 1);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), 256);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_VmPTE), 4 + 8); /* the old table is deposited */
	ASSERT(tpage(p, a).huge && tpage(p, a).thp && tpage(p, a).writable);
	tread(p, a, MB(2), KB(8), 7);
	tread(p, a + PAGE, MB(2) - PAGE, KB(8), 0);
	/* the untouched 2 MiB: an empty PMD, EINVAL, nothing changes */
	ASSERT_EQ(collapse(p, a + MB(2), MB(2)), -EINVAL);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	/* already PMD-mapped: success, nothing to do */
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	/* the collapsed THP behaves as any: a 4 KiB zap splits it */
	tmadvise(p, a + PAGE, PAGE, THPS_MADV_DONTNEED);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2044);
	texit(p);
	tdrop_caches();
	tcheck();
}

/* collapse-zero-ptes with the zero page: 511 zero-page entries and one
 * page.  Before 6.18, zero-page entries alone are refused (read-only). */
TEST(collapse_zero_page_entries)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "thpsim/kernel=6.12", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	tread(p, a, MB(2), PAGE, 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);
	ASSERT_EQ(collapse(p, a, MB(2)), -EINVAL); /* SCAN_PAGE_RO */
	twrite(p, a, 1, 1, 9);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
	vm_mark();
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	ASSERT(tpage(p, a + PAGE).thp);
	tread(p, a, 1, 1, 9);
	tread(p, a + 1, MB(2) - 1, PAGE, 0);
	/* 6.18 drops SCAN_PAGE_RO: zero-page entries alone collapse */
	tknob("thpsim/kernel", "6.18");
	a = tmmap_aligned(p, MB(2));
	tread(p, a, MB(2), PAGE, 0);
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	texit(p);
}

/* collapse-after-fork(-ro): shared pages; the child keeps its own. */
TEST(collapse_shared_after_fork)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, "thpsim/kernel=6.12", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), PAGE, 3);
	c = tfork(p);
	ASSERT_EQ(collapse(p, a, MB(2)), -EINVAL); /* every entry read-only */
	twrite(p, a, 1, 1, 4);
	vm_mark();
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(c, THPS_PROC_Rss), 2048);
	ASSERT_EQ(fig(c, THPS_PROC_Shared_Dirty), 0);
	ASSERT_EQ(fig(c, THPS_PROC_Private_Dirty), 2048);
	tread(p, a, 1, 1, 4);
	tread(p, a + PAGE, MB(2) - PAGE, PAGE, 3);
	tread(c, a, MB(2), PAGE, 3);
	texit(c);
	texit(p);
}

/* collapse-pte-mapped-thp: the old folio is freed; before 6.17 it is
 * queued for deferred split on the way (one entry at a time). */
static void pte_mapped_thp(const char *kernel, int deferred)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, kernel, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	tmadvise(p, a, MB(2), THPS_MADV_HUGEPAGE);
	twrite(p, a, MB(2), PAGE, 8);
	tmprotect(p, a, PAGE, THPS_PROT_READ);
	tmprotect(p, a, PAGE, RW);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	vm_mark();
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_deferred_split_page), deferred);
	ASSERT_EQ(vm_delta(THPS_VM_nr_free_pages), 0); /* one THP for another */
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	tread(p, a, MB(2), PAGE, 8);
	texit(p);
}

TEST(collapse_pte_mapped_thp_batched)
{
	pte_mapped_thp("thpsim/kernel=6.18", 0);
}

TEST(collapse_pte_mapped_thp_one_at_a_time)
{
	pte_mapped_thp("thpsim/kernel=6.12", 1);
}

/* What a collapse asks of a VMA and a range (collapse-vma-boundary,
 * collapse-across-vmas, collapse-nohugepage, collapse-errors). */
TEST(collapse_refusals)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(6));
	twrite(p, a, MB(6), PAGE, 2);
	tmprotect(p, a + MB(3), MB(1), THPS_PROT_READ);
	vm_mark();
	/* the first VMA collapses, the second refuses, the third is left */
	ASSERT_EQ(collapse(p, a, MB(6)), -EINVAL);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT(tpage(p, a).huge);
	ASSERT(!tpage(p, a + MB(4)).huge);
	ASSERT_OK(collapse(p, a + MB(4), MB(2)));
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	/* no aligned 2 MiB in the range, or in the VMA */
	ASSERT_EQ(collapse(p, a + MB(2) + PAGE, 2 * PAGE), -EINVAL);
	ASSERT_EQ(collapse(p, a + MB(3), MB(1)), -EINVAL);
	/* a hole: ENOMEM, after the VMAs around it */
	tmunmap(p, a + MB(2), MB(2));
	ASSERT_EQ(collapse(p, a, MB(6)), -ENOMEM);
	/* MADV_NOHUGEPAGE, PR_SET_THP_DISABLE */
	tmadvise(p, a, MB(2), THPS_MADV_NOHUGEPAGE);
	ASSERT_EQ(collapse(p, a, MB(2)), -EINVAL);
	ASSERT_OK(thps_prctl_thp_disable(p, 1));
	ASSERT_EQ(collapse(p, a + MB(4), MB(2)), -EINVAL);
	ASSERT_OK(thps_prctl_thp_disable(p, 0));
	ASSERT_OK(collapse(p, a + MB(4), MB(2)));
	/* enabled=never does not matter */
	tknob("transparent_hugepage/enabled", "never");
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), MB(1), 1);
	ASSERT_OK(collapse(p, a, MB(2)));
	ASSERT(tpage(p, a).huge);
	texit(p);
}

/* No THP to be had: thp_collapse_alloc_failed and ENOMEM, nothing lost. */
TEST(collapse_allocation_failure)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(4));
	twrite(p, a, MB(4), PAGE, 5);
	vm_mark();
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 1, 0);
	ASSERT_EQ(collapse(p, a, MB(4)), -ENOMEM);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc_failed), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4096);
	tread(p, a, MB(4), PAGE, 5);
	/* the next try gets its THPs */
	ASSERT_OK(collapse(p, a, MB(4)));
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 2);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	tread(p, a, MB(4), PAGE, 5);
	texit(p);
}

/* ---- khugepaged's background scan ---- */

static struct thps_khugepaged_stats kstats(void)
{
	struct thps_khugepaged_stats s;

	thps_khugepaged_stats(T, &s);
	return s;
}

static void kscan(uint64_t wakeups, uint64_t full_scans)
{
	ASSERT_OK(thps_khugepaged_run(T, wakeups, full_scans));
	tcheck();
}

/*
 * max_ptes_none counts none and zero-page entries (hpage_collapse_scan_pmd):
 * 511 zero-page entries and one page collapse at 511, not at 510; nothing
 * runs before MADV_HUGEPAGE registers the mm (enabled=madvise).
 */
TEST(khugepaged_max_ptes_none_counts_zero_pages)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "thpsim/kernel=6.12", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	tread(p, a, MB(2), PAGE, 0);
	twrite(p, a, 1, 1, 9);
	kscan(0, 1);
	ASSERT_EQ(kstats().full_scans, 0); /* no mm slot: it sleeps */
	ASSERT_EQ(kstats().wakeups, 0);
	tknob("transparent_hugepage/khugepaged/max_ptes_none", "510");
	tmadvise(p, a, MB(2), THPS_MADV_HUGEPAGE);
	vm_mark();
	kscan(0, 1);
	ASSERT_EQ(kstats().full_scans, 1);
	ASSERT_EQ(kstats().pages_collapsed, 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	tknob("transparent_hugepage/khugepaged/max_ptes_none", "511");
	kscan(0, 1);
	ASSERT_EQ(kstats().full_scans, 2);
	ASSERT_EQ(kstats().pages_collapsed, 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
	tread(p, a, 1, 1, 9);
	tread(p, a + 1, MB(2) - 1, PAGE, 0);
	texit(p);
	ASSERT_EQ(kstats().full_scans, 2);
}

/* The cursor: pages_to_scan=512 is one 2 MiB range per wake-up, and the
 * pass past the last range of the last mm is a full scan. */
TEST(khugepaged_pages_to_scan_moves_the_cursor)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	tknob("transparent_hugepage/khugepaged/pages_to_scan", "512");
	p = tproc();
	a = tmmap_aligned(p, MB(8));
	tmadvise(p, a, MB(8), THPS_MADV_NOHUGEPAGE); /* no THP at fault... */
	twrite(p, a, MB(8), KB(64), 3);
	tmadvise(p, a, MB(8), THPS_MADV_HUGEPAGE);  /* ...then registered */
	kscan(1, 0);
	ASSERT_EQ(kstats().pages_collapsed, 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(kstats().now_ms, 10000); /* scan_sleep_millisecs */
	kscan(2, 0);
	ASSERT_EQ(kstats().pages_collapsed, 3);
	ASSERT_EQ(kstats().full_scans, 0);
	kscan(0, 1);
	ASSERT_EQ(kstats().pages_collapsed, 4);
	ASSERT_EQ(kstats().full_scans, 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 8192);
	tread(p, a, MB(8), KB(64), 3);
	texit(p);
}

/* max_ptes_shared: after fork, with one written page each side. */
TEST(khugepaged_max_ptes_shared)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, "thpsim/kernel=6.12", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	tmadvise(p, a, MB(2), THPS_MADV_NOHUGEPAGE);
	twrite(p, a, MB(2), PAGE, 4);
	tmadvise(p, a, MB(2), THPS_MADV_HUGEPAGE);
	ASSERT_OK(thps_fork(p, &c));
	twrite(p, a, 1, 1, 5);
	twrite(c, a, 1, 1, 6);
	vm_mark();
	kscan(0, 1); /* 511 shared > 256 on both sides */
	ASSERT_EQ(kstats().pages_collapsed, 0);
	tknob("transparent_hugepage/khugepaged/max_ptes_shared", "511");
	kscan(0, 1);
	ASSERT_EQ(kstats().pages_collapsed, 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc), 2);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(c, THPS_PROC_AnonHugePages), 2048);
	tread(p, a, 1, 1, 5);
	tread(c, a, 1, 1, 6);
	tread(p, a + PAGE, MB(2) - PAGE, PAGE, 4);
	tread(c, a + PAGE, MB(2) - PAGE, PAGE, 4);
	texit(c);
	texit(p);
}

/* A failed allocation: alloc_sleep_millisecs, one retry, then the wake-up
 * ends; thp_collapse_alloc_failed counts both. */
TEST(khugepaged_alloc_sleep)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(4));
	tmadvise(p, a, MB(4), THPS_MADV_NOHUGEPAGE);
	twrite(p, a, MB(4), PAGE, 5);
	tmadvise(p, a, MB(4), THPS_MADV_HUGEPAGE);
	vm_mark();
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 1, 1);
	kscan(1, 0);
	ASSERT_EQ(vm_delta(THPS_VM_thp_collapse_alloc_failed), 2);
	ASSERT_EQ(kstats().now_ms, 60000 + 10000);
	ASSERT_EQ(kstats().pages_collapsed, 0);
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 0, 0);
	kscan(0, 1);
	ASSERT_EQ(kstats().pages_collapsed, 2);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	tread(p, a, MB(4), PAGE, 5);
	texit(p);
}

/* A process that exits while the cursor is in it: the scan goes on. */
TEST(khugepaged_exit_mid_scan)
{
	thps_proc *p, *q;
	uint64_t a, b;

	tmachine(64, NULL);
	tknob("transparent_hugepage/khugepaged/pages_to_scan", "512");
	p = tproc();
	q = tproc();
	a = tmmap_aligned(p, MB(4));
	b = tmmap_aligned(q, MB(2));
	tmadvise(p, a, MB(4), THPS_MADV_NOHUGEPAGE);
	tmadvise(q, b, MB(2), THPS_MADV_NOHUGEPAGE);
	twrite(p, a, MB(4), MB(1), 1);
	twrite(q, b, MB(2), MB(1), 2);
	tmadvise(p, a, MB(4), THPS_MADV_HUGEPAGE);
	tmadvise(q, b, MB(2), THPS_MADV_HUGEPAGE);
	kscan(1, 0);
	ASSERT_EQ(kstats().pages_collapsed, 1);
	texit(p);
	kscan(0, 1);
	ASSERT_EQ(kstats().pages_collapsed, 2);
	ASSERT_EQ(fig(q, THPS_PROC_AnonHugePages), 2048);
	texit(q);
}
