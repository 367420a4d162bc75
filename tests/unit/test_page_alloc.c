/*
 * test_page_alloc.c - the buddy allocator's fast paths against the slow
 * ones they stand for.
 *
 * Linux refills a CPU's frame cache with rmqueue_bulk(), which calls
 * __rmqueue() once per frame.  The model's rmqueue_bulk takes whole blocks
 * instead; it must hand out the same frames in the same order and leave
 * the same free lists, down to the order of the blocks in each list
 * (which decides what later allocations get).  Two machines are put in
 * the same fragmented state; one is refilled frame by frame with
 * __rmqueue(m, 0), the other with rmqueue_bulk, and everything is compared.
 */
#include "../test.h"
#include "internal.h"

#define NALLOC 3000
#define MAX_LISTED 20000

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A fresh machine, fragmented the same way for the same seed: blocks of
 * orders 0-3 allocated (plain high-order pages, not folios), then a random
 * part of them freed. */
static struct thps_machine *fragmented(uint64_t seed)
{
	static struct page *pages[NALLOC];
	static unsigned orders[NALLOC];
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;

	tmachine(64, NULL);
	for (int i = 0; i < NALLOC; i++) {
		orders[i] = rng_next(&s) % 4 == 0 ? (unsigned)(rng_next(&s) % 4) : 0;
		pages[i] = alloc_pages(T, NULL, GFP_KERNEL, orders[i]);
		ASSERT(pages[i]);
	}
	for (int i = 0; i < NALLOC; i++)
		if (rng_next(&s) % 3) {
			atomic_set(&pages[i]->_refcount, 0);
			free_pages(T, NULL, pages[i], orders[i]);
		}
	return T;
}

/* The free lists, order by order, each in list order; entries are
 * pfn * 16 + order, lists ended by UINT64_MAX. */
static int snapshot(struct thps_machine *m, uint64_t *out)
{
	int n = 0;

	for (unsigned o = 0; o <= MAX_PAGE_ORDER; o++) {
		uint64_t listed = 0;

		for (uint32_t pfn = m->zone.free_area[o].head; pfn != NO_PFN;
		     pfn = pfn_to_page(m, pfn)->lru.next) {
			ASSERT(n < MAX_LISTED - 1);
			ASSERT(PageBuddy(pfn_to_page(m, pfn)));
			ASSERT_EQ(pfn_to_page(m, pfn)->order, o);
			out[n++] = (uint64_t)pfn * 16 + o;
			listed++;
		}
		out[n++] = UINT64_MAX;
		ASSERT_EQ((uint64_t)m->zone.free_area[o].nr_free, listed);
	}
	return n;
}

static void compare_refills(uint64_t seed, int count)
{
	static uint64_t slow_lists[MAX_LISTED], fast_lists[MAX_LISTED];
	static int64_t slow[4096];
	static uint32_t stack[4096];
	int n = 0;
	uint64_t wild_slow, wild_fast;
	int nslow = 0, nlists_slow, nlists_fast, i;

	ASSERT(count <= 4096);
	fragmented(seed);
	for (i = 0; i < count; i++) {
		slow[i] = __rmqueue(T, 0);
		if (slow[i] < 0)
			break;
		nslow++;
	}
	nlists_slow = snapshot(T, slow_lists);
	wild_slow = T->zone.wilderness;

	fragmented(seed);
	rmqueue_bulk(T, stack, &n, count);
	nlists_fast = snapshot(T, fast_lists);
	wild_fast = T->zone.wilderness;

	/* the stack holds the frames in the order taken: the last is first out */
	ASSERT_EQ(n, nslow);
	for (i = 0; i < n; i++) {
		struct page *page = pfn_to_page(T, stack[i]);

		ASSERT_EQ((int64_t)stack[i], slow[i]);
		ASSERT(!PageBuddy(page));
		ASSERT(PagePcp(page));
		ASSERT_EQ(page->order, 0);
	}
	ASSERT_EQ(wild_fast, wild_slow);
	ASSERT_EQ(nlists_fast, nlists_slow);
	for (i = 0; i < nlists_slow; i++)
		ASSERT_EQ(fast_lists[i], slow_lists[i]);
}

TEST(page_alloc_bulk_refill_takes_what_per_frame_refill_takes)
{
	static const int counts[] = { 1, 2, 3, 7, 63, 64, 100, 511, 1000, 4096 };

	for (uint64_t seed = 1; seed <= 6; seed++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
			compare_refills(seed, counts[c]);
}
