/*
 * vmscan.c - the shrinkers and dropping caches (mirrors shrink_slab() in
 * mm/shrinker.c and drop_slab() in mm/vmscan.c).
 *
 * Two shrinkers matter here, registered in this order as in
 * thp_shrinker_init(): the huge zero page's ("thp-zero"), which frees the page
 * when its own reference is the last, and the deferred-split queue's, which
 * splits partially mapped (and underused) THPs.  They run when an allocation
 * that may reclaim fails (direct reclaim), and on
 * "echo 2 > /proc/sys/vm/drop_caches" (thps_drop_caches), which repeats
 * until a pass frees nothing.
 */
#include "internal.h"

unsigned long shrink_slab(struct thps_machine *m, struct mm_struct *held)
{
	unsigned long freed = 0, n;

	if (shrink_huge_zero_page_count(m))
		freed += shrink_huge_zero_page_scan(m);
	n = deferred_split_count(m);
	if (n)
		freed += deferred_split_scan(m, held, n);
	return freed;
}

void thps_drop_caches(thps_machine *m)
{
	/* bounded: each pass either frees something or ends the loop */
	for (int pass = 0; pass < 64; pass++) {
		drain_all_pages(m);
		if (!shrink_slab(m, NULL))
			break;
	}
}
