/*
 * test_regress_internal.c - regressions that need the model's internals to
 * set up deterministically what the threaded soak (tests/fuzz, thpsim-soak
 * --threads) found by chance.
 */
#include "../test.h"
#include "internal.h"

/*
 * MADV_FREE over part of a THP splits it (split_folio) while the
 * deferred-split shrinker on another thread holds a reference it took from
 * the queue.  The model asserted that every reference but the caller's is
 * a mapping (VM_BUG_ON in split_folio_to_order) and aborted; Linux's
 * can_split_folio counts the extra pin and the split fails (the range is
 * then left as it is).  Found by "thpsim-soak --threads 4 --seed 2" under
 * ThreadSanitizer.  The other thread's reference is taken by hand here.
 */
TEST(regress_split_of_a_pinned_folio_fails_cleanly)
{
	thps_proc *p;
	uint64_t a, mi[THPS_NR_MEMINFO_ITEMS];
	struct folio *folio;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), PAGE, 7); /* a THP, queued for the underused shrinker */
	ASSERT(tpage(p, a).huge);
	folio = page_folio(T, pfn_to_page(T, tpage(p, a).pfn));
	folio_get(folio); /* the shrinker's reference, on another thread */
	ASSERT_OK(thps_madvise(p, a, PAGE, THPS_MADV_FREE));
	ASSERT_EQ(vm(THPS_VM_thp_split_page), 0);
	ASSERT(tpage(p, a).huge);
	folio_put(T, NULL, folio); /* (the checker counts no such reference: after) */
	tcheck();
	/* without the other reference the same advice splits it */
	tmadvise(p, a, PAGE, THPS_MADV_FREE);
	ASSERT_EQ(vm(THPS_VM_thp_split_page), 1);
	ASSERT(!tpage(p, a).huge);
	tread(p, a, MB(2), PAGE, 7);
	texit(p);
	tdrop_caches();
	thps_meminfo(T, mi);
	ASSERT_EQ(mi[THPS_MEM_MemFree], mi[THPS_MEM_MemTotal]);
}

/*
 * page_unshared() lets the owner of an order-0 page update its flags and
 * counts without locked instructions, which is right only while no other
 * process can reach the page.  It must say so for a page one process
 * wrote, and not for the zero page, a page fork shares (on both sides,
 * also after the child's copy, until the parent's write reuses it), or a
 * page of a THP (the deferred-split shrinker reaches those from other
 * threads).
 */
static bool unshared_at(thps_proc *p, uint64_t a)
{
	return page_unshared(pfn_to_page(T, tpage(p, a).pfn));
}

TEST(page_unshared_only_while_one_process_can_reach_the_page)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, "transparent_hugepage/enabled=never", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, PAGE, PAGE, 1);
	tread(p, a + PAGE, PAGE, PAGE, 0);
	ASSERT(unshared_at(p, a));
	ASSERT(tpage(p, a + PAGE).zero_page);
	ASSERT(!unshared_at(p, a + PAGE));
	c = tfork(p);
	ASSERT_EQ(tpage(c, a).pfn, tpage(p, a).pfn);
	ASSERT(!unshared_at(p, a));
	twrite(c, a, PAGE, PAGE, 2); /* the child copies */
	ASSERT(unshared_at(c, a));
	ASSERT(!unshared_at(p, a)); /* exclusive again only once reused */
	twrite(p, a, PAGE, PAGE, 3);
	ASSERT(unshared_at(p, a));
	texit(c);
	texit(p);

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), PAGE, 4);
	ASSERT(tpage(p, a).huge);
	ASSERT(!unshared_at(p, a));
	ASSERT(!unshared_at(p, a + 5 * PAGE));
	texit(p);
}
