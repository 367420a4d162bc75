/*
 * page_alloc.c - simulated physical memory and its buddy allocator
 * (mirrors mm/page_alloc.c).
 *
 * Every 4 KiB frame has 32 bytes of metadata (struct page) and 4 KiB of
 * host bytes.  Both arrays are reserved once with MAP_NORESERVE and the host
 * commits them lazily, so a 64 GiB machine costs what it touches.
 *
 * The buddy allocator keeps free blocks of orders 0..MAX_PAGE_ORDER on
 * lists threaded through the metadata, splits the smallest block that fits
 * and merges a freed block with its buddy, so a huge-page allocation really
 * fails when memory is full or fragmented.  Memory never handed out yet is
 * the "wilderness": free, but carved into max-order blocks only when the
 * lists run dry, which keeps the host from touching metadata it never needs.
 *
 * Each process caches order-0 frames (Linux does it per CPU) so that
 * independent processes on different threads rarely meet on the zone lock.
 * An exiting process parks its cache and a new process adopts it
 * (struct pcp_pool), as a CPU's lists pass from one task to the next, so
 * processes that come and go do not take the zone lock either.
 * A failed allocation drains those caches and runs the shrinkers before it
 * gives up, as direct reclaim does; injected failures are final.
 *
 * Frames remember whether their bytes are known to be zero (PG_zeroed), so a
 * zeroed allocation writes only frames that were written before.
 */
#include <sys/mman.h>

#include "internal.h"

_Static_assert(sizeof(struct page) == 32, "struct page is 32 bytes");
_Static_assert(sizeof(struct folio) == 3 * sizeof(struct page), "folio overlays page[0..2]");
_Static_assert(offsetof(struct folio, _flags_1) == sizeof(struct page), "page[1] flags");
_Static_assert(offsetof(struct folio, _mapcount_1) ==
		       sizeof(struct page) + offsetof(struct page, _mapcount),
	       "page[1] keeps its own mapcount");
_Static_assert(offsetof(struct folio, _head_1) ==
		       sizeof(struct page) + offsetof(struct page, compound_head),
	       "page[1] keeps its compound_head");
_Static_assert(offsetof(struct folio, _flags_2) == 2 * sizeof(struct page), "page[2] flags");
_Static_assert(offsetof(struct folio, _mapcount_2) ==
		       2 * sizeof(struct page) + offsetof(struct page, _mapcount),
	       "page[2] keeps its own mapcount");
_Static_assert(offsetof(struct folio, _head_2) ==
		       2 * sizeof(struct page) + offsetof(struct page, compound_head),
	       "page[2] keeps its compound_head");

static void *map_reserve(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* ---- free lists ---- (inlined: a zap's frees merge about once a frame) */
static inline __attribute__((always_inline)) void
list_add_pfn(struct thps_machine *m, uint32_t *head, uint32_t pfn)
{
	struct page *page = pfn_to_page(m, pfn);

	page->lru.prev = NO_PFN;
	page->lru.next = *head;
	if (*head != NO_PFN)
		pfn_to_page(m, *head)->lru.prev = pfn;
	*head = pfn;
}

static inline __attribute__((always_inline)) void
list_del_pfn(struct thps_machine *m, uint32_t *head, uint32_t pfn)
{
	struct page *page = pfn_to_page(m, pfn);

	if (page->lru.prev != NO_PFN)
		pfn_to_page(m, page->lru.prev)->lru.next = page->lru.next;
	else
		*head = page->lru.next;
	if (page->lru.next != NO_PFN)
		pfn_to_page(m, page->lru.next)->lru.prev = page->lru.prev;
	page->lru.next = page->lru.prev = NO_PFN;
}

static inline __attribute__((always_inline)) void
add_to_free_list(struct thps_machine *m, uint32_t pfn, unsigned order)
{
	struct page *page = pfn_to_page(m, pfn);

	page->order = (uint8_t)order;
	__SetPageBuddy(page);
	list_add_pfn(m, &m->zone.free_area[order].head, pfn);
	m->zone.free_area[order].nr_free++;
}

static inline __attribute__((always_inline)) void
del_from_free_list(struct thps_machine *m, uint32_t pfn, unsigned order)
{
	struct page *page = pfn_to_page(m, pfn);

	list_del_pfn(m, &m->zone.free_area[order].head, pfn);
	__ClearPageBuddy(page);
	page->order = 0;
	m->zone.free_area[order].nr_free--;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
/*
 * Have the host commit the metadata of frames below "end" before the model
 * first touches it, a chunk at a time.  Otherwise the first access to each
 * host page of mem_map is the read half of __SetPageZeroed: the host maps
 * its zero page, and the write that follows faults again to copy it.  Two
 * host faults per 128 frames were a fifth of a write-heavy replay's time;
 * one madvise per chunk commits the same pages without them.  A host that
 * refuses (before 5.14) commits on first touch as before.  Zone lock held.
 */
#define METADATA_CHUNK (256UL << 10) /* bytes of mem_map: 8192 frames */
static void commit_metadata(struct thps_machine *m, uint64_t end)
{
	uint64_t from = m->zone.metadata_committed, to;

	if (end <= from)
		return;
	to = (end * sizeof(struct page) + METADATA_CHUNK - 1) & ~(METADATA_CHUNK - 1);
	if (to > m->nr_frames * sizeof(struct page))
		to = m->nr_frames * sizeof(struct page);
	(void)madvise((uint8_t *)m->mem_map + from * sizeof(struct page),
		      to - from * sizeof(struct page), MADV_POPULATE_WRITE);
	m->zone.metadata_committed = to / sizeof(struct page);
}

/* Hand a never-used block from the wilderness to the free lists. */
static bool carve_wilderness(struct thps_machine *m)
{
	uint64_t pfn = m->zone.wilderness;
	unsigned order = MAX_PAGE_ORDER;

	if (pfn >= m->nr_frames)
		return false;
	while (order && (!IS_ALIGNED(pfn, 1UL << order) || pfn + (1UL << order) > m->nr_frames))
		order--;
	commit_metadata(m, pfn + (1UL << order));
	WRITE_ONCE(m->zone.wilderness, pfn + (1UL << order));
	for (uint64_t i = 0; i < (1UL << order); i++)
		__SetPageZeroed(pfn_to_page(m, pfn + i));
	add_to_free_list(m, (uint32_t)pfn, order);
	return true;
}

/* __free_one_page: merge with free buddies, then list the block. Zone lock held. */
static void __free_one_page(struct thps_machine *m, uint64_t pfn, unsigned order)
{
	while (order < MAX_PAGE_ORDER) {
		uint64_t buddy_pfn = pfn ^ (1UL << order);
		struct page *buddy;

		if (buddy_pfn >= m->zone.wilderness)
			break;
		buddy = pfn_to_page(m, buddy_pfn);
		if (!PageBuddy(buddy) || buddy->order != order)
			break;
		del_from_free_list(m, (uint32_t)buddy_pfn, order);
		pfn &= ~(1UL << order);
		order++;
	}
	add_to_free_list(m, (uint32_t)pfn, order);
}

/* The smallest free block of at least "order", taken off its list (from
 * the wilderness when every list is empty); *got gets its order.  -1 when
 * memory is full. */
static int64_t take_smallest_block(struct thps_machine *m, unsigned order, unsigned *got)
{
	for (;;) {
		for (unsigned o = order; o <= MAX_PAGE_ORDER; o++) {
			uint32_t pfn = m->zone.free_area[o].head;

			if (pfn == NO_PFN)
				continue;
			del_from_free_list(m, pfn, o);
			*got = o;
			return pfn;
		}
		if (!carve_wilderness(m))
			return -1;
	}
}

/* __rmqueue_smallest: the smallest free block that fits, split down. */
int64_t __rmqueue(struct thps_machine *m, unsigned order)
{
	unsigned o;
	int64_t pfn = take_smallest_block(m, order, &o);

	/* expand(): give back the upper halves */
	while (pfn >= 0 && o > order) {
		o--;
		add_to_free_list(m, (uint32_t)pfn + (1U << o), o);
	}
	return pfn;
}

/* ---- failure injection ---- */
static bool should_fail_alloc(struct thps_machine *m, gfp_t gfp)
{
	struct fail_inject *f = &m->fail;
	int cls = (gfp & __GFP_PGTABLE) ? THPS_ALLOC_PGTABLE : THPS_ALLOC_PAGE;
	bool fail = false;

	if (likely(!READ_ONCE(m->fail_counting)) || (gfp & __GFP_NOFAIL_INJ))
		return false;
	spin_lock(&m->fail_lock);
	f->count[cls]++;
	f->count[THPS_ALLOC_ANY]++;
	for (int c = cls;; c = THPS_ALLOC_ANY) {
		if (f->fail_at[c] &&
		    (f->count[c] == f->fail_at[c] || (f->sticky[c] && f->count[c] > f->fail_at[c])))
			fail = true;
		if (c == THPS_ALLOC_ANY)
			break;
	}
	spin_unlock(&m->fail_lock);
	return fail;
}

void thps_fail_alloc(thps_machine *m, enum thps_alloc_class cls, uint64_t nth, int sticky)
{
	if ((unsigned)cls >= THPS_NR_ALLOC_CLASSES)
		return;
	spin_lock(&m->fail_lock);
	m->fail.fail_at[cls] = nth;
	m->fail.sticky[cls] = sticky != 0;
	if (nth)
		m->fail.count[cls] = 0;
	spin_unlock(&m->fail_lock);
	WRITE_ONCE(m->fail_counting, true);
}

uint64_t thps_alloc_count(thps_machine *m, enum thps_alloc_class cls)
{
	uint64_t n = 0;

	if ((unsigned)cls >= THPS_NR_ALLOC_CLASSES)
		return 0;
	spin_lock(&m->fail_lock);
	n = m->fail.count[cls];
	spin_unlock(&m->fail_lock);
	return n;
}

/* ---- bytes ---- */
void clear_page_bytes(struct thps_machine *m, struct page *page)
{
	if (!PageZeroed(page)) {
		memset(page_address(m, page), 0, PAGE_SIZE);
		SetPageZeroed(page);
	}
}

void copy_page_bytes(struct thps_machine *m, struct page *dst, const struct page *src)
{
	if (PageZeroed(src)) {
		clear_page_bytes(m, dst);
	} else {
		memcpy(page_address(m, dst), page_address(m, src), PAGE_SIZE);
		page_bytes_dirtied(dst);
	}
	if (PageNonzero(src))
		SetPageNonzero(dst);
}

bool page_bytes_zero(struct thps_machine *m, const struct page *page)
{
	if (PageNonzero(page))
		return false;
	return PageZeroed(page) || page_bytes_zero_raw(m, page);
}

bool page_bytes_zero_raw(struct thps_machine *m, const struct page *page)
{
	const uint64_t *w = page_address(m, page);

	for (size_t i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/* ---- per-process caches ---- */
static void pcp_push(struct thps_machine *m, uint32_t *stack, int *n, uint32_t pfn)
{
	__SetPagePcp(pfn_to_page(m, pfn));
	stack[(*n)++] = pfn;
}

static uint32_t pcp_pop(struct thps_machine *m, uint32_t *stack, int *n)
{
	uint32_t pfn = stack[--(*n)];

	__ClearPagePcp(pfn_to_page(m, pfn));
	return pfn;
}

/* Give "count" frames of a cache (or a parked one) back to the buddy
 * lists, the last in first.  Zone lock held. */
static void free_stack_bulk(struct thps_machine *m, uint32_t *stack, int *n, int count)
{
	while (count-- > 0 && *n) {
		__free_one_page(m, pcp_pop(m, stack, n), 0);
		m->zone.nr_free_pages++;
	}
}

/* Give "count" frames of the cache back to the buddy lists. pcp lock held. */
static void free_pcppages_bulk(struct thps_machine *m, struct per_cpu_pages *pcp, int count)
{
	spin_lock(&m->zone.lock);
	free_stack_bulk(m, pcp->pfn, &pcp->count, count);
	spin_unlock(&m->zone.lock);
}

void drain_pcp(struct thps_machine *m, struct mm_struct *mm)
{
	raw_spin_lock(&mm->pcp.lock);
	free_pcppages_bulk(m, &mm->pcp, mm->pcp.count);
	raw_spin_unlock(&mm->pcp.lock);
}

/* ---- the caches of exited processes (struct pcp_pool) ---- */

/*
 * Parked frames stay where they are, free but unmerged, and a process that
 * adopts them allocates its tables and pages there, so a cache is parked
 * only when that cannot change which huge pages can be had:
 *  - while the wilderness still holds a block of the largest order, since
 *    a huge page is then carved from memory never handed out;
 *  - and when its frames lie in at most PCP_PARK_MAX_BLOCKS pageblocks
 *    (2 MiB), as frames handed out together by a refill do.  A cache that
 *    filled up with frees from all over memory (a process that wrote a lot
 *    of 4 KiB pages) goes back to the buddy lists, where it merges.
 * Any other cache is drained as before, and so is the pool.
 */
#define PCP_PARK_MAX_BLOCKS 2

static bool may_park(struct thps_machine *m)
{
	return READ_ONCE(m->zone.wilderness) + (1UL << MAX_PAGE_ORDER) <= m->nr_frames;
}

static bool pcp_compact(struct thps_machine *m, const struct per_cpu_pages *pcp)
{
	uint32_t block[PCP_PARK_MAX_BLOCKS];
	int nr = 0;

	for (int j = 0; j < pcp->count; j++) {
		uint32_t b = pcp->pfn[j] >> HPAGE_PMD_ORDER;
		int i;

		for (i = 0; i < nr && block[i] != b; i++)
			;
		if (i == nr) {
			if (nr == PCP_PARK_MAX_BLOCKS)
				return false;
			block[nr++] = b;
		}
	}
	return true;
}

static bool drain_pcp_pool(struct thps_machine *m);

/* An exiting process's cache: parked for a new process when it may be and
 * there is room, else back to the buddy lists. */
void park_pcp(struct thps_machine *m, struct mm_struct *mm)
{
	struct per_cpu_pages *pcp = &mm->pcp;
	struct pcp_pool *pool = &m->pcp_pool;
	bool parked = false;

	raw_spin_lock(&pcp->lock);
	if (pcp->count && may_park(m) && pcp_compact(m, pcp)) {
		spin_lock(&pool->lock);
		if (pool->nr < PCP_POOL_LISTS && pool->count + pcp->count <= PCP_POOL_HIGH) {
			memcpy(pool->list[pool->nr].pfn, pcp->pfn,
			       (size_t)pcp->count * sizeof(pcp->pfn[0]));
			pool->list[pool->nr].count = pcp->count;
			WRITE_ONCE(pool->nr, pool->nr + 1);
			pool->count += pcp->count;
			WRITE_ONCE(pcp->count, 0);
			parked = true;
		}
		spin_unlock(&pool->lock);
	}
	if (pcp->count)
		free_pcppages_bulk(m, pcp, pcp->count);
	raw_spin_unlock(&pcp->lock);
	if (!parked && !may_park(m))
		drain_pcp_pool(m);
}

/* Adopt the cache an exited process parked last.  pcp lock held, pcp empty. */
static bool adopt_pcp(struct thps_machine *m, struct per_cpu_pages *pcp)
{
	struct pcp_pool *pool = &m->pcp_pool;
	bool got = false;

	if (!READ_ONCE(pool->nr) || !may_park(m))
		return false;
	spin_lock(&pool->lock);
	if (pool->nr) {
		WRITE_ONCE(pool->nr, pool->nr - 1);
		memcpy(pcp->pfn, pool->list[pool->nr].pfn,
		       (size_t)pool->list[pool->nr].count * sizeof(pcp->pfn[0]));
		WRITE_ONCE(pcp->count, pool->list[pool->nr].count);
		pool->count -= pcp->count;
		got = true;
	}
	spin_unlock(&pool->lock);
	return got;
}

/* Every parked cache back to the buddy lists; true if there was one. */
static bool drain_pcp_pool(struct thps_machine *m)
{
	struct pcp_pool *pool = &m->pcp_pool;
	bool any = false;

	if (!READ_ONCE(pool->nr))
		return false;
	spin_lock(&pool->lock);
	spin_lock(&m->zone.lock);
	while (pool->nr) {
		WRITE_ONCE(pool->nr, pool->nr - 1);
		pool->count -= pool->list[pool->nr].count;
		free_stack_bulk(m, pool->list[pool->nr].pfn, &pool->list[pool->nr].count,
				pool->list[pool->nr].count);
		any = true;
	}
	spin_unlock(&m->zone.lock);
	spin_unlock(&pool->lock);
	return any;
}

void drain_all_pages(struct thps_machine *m)
{
	spin_lock(&m->proc_lock);
	for (struct thps_proc *p = m->procs; p; p = p->next)
		drain_pcp(m, &p->mm);
	spin_unlock(&m->proc_lock);
	drain_pcp_pool(m);
}

uint64_t nr_free_pages(struct thps_machine *m)
{
	uint64_t n;

	spin_lock(&m->pcp_pool.lock);
	n = (uint64_t)m->pcp_pool.count;
	spin_unlock(&m->pcp_pool.lock);
	spin_lock(&m->zone.lock);
	n += m->zone.nr_free_pages;
	spin_unlock(&m->zone.lock);
	spin_lock(&m->proc_lock);
	for (struct thps_proc *p = m->procs; p; p = p->next)
		n += (uint64_t)READ_ONCE(p->mm.pcp.count);
	spin_unlock(&m->proc_lock);
	return n;
}

/* ---- allocation ---- */
/* One frame of a new allocation forgets where it was; zeroed if asked. */
static inline __attribute__((always_inline)) void
prep_new_frame(struct thps_machine *m, struct page *p, gfp_t gfp)
{
	VM_BUG_ON_PAGE(atomic_read(&p->_refcount) || atomic_read(&p->_mapcount), m, p);
	set_flags_nonatomic(p, test_bit_flags(p, PG_zeroed) << PG_zeroed);
	p->order = 0;
	p->index = 0;
	p->lru.next = p->lru.prev = NO_PFN;
	if ((gfp & __GFP_ZERO) && !PageZeroed(p))
		clear_page_bytes(m, p);
}

static inline __attribute__((always_inline)) void
prep_new_page(struct thps_machine *m, uint64_t pfn, unsigned order, gfp_t gfp)
{
	struct page *page = pfn_to_page(m, pfn);
	uint64_t nr = 1UL << order;

	for (uint64_t i = 0; i < nr; i++)
		prep_new_frame(m, page + i, gfp);
	atomic_set(&page->_refcount, 1);
	if ((gfp & __GFP_COMP) && order) {
		struct folio *folio = (struct folio *)page;

		/* a folio's fields reach into page[2]: an order-1 folio would
		 * write over the next frame's (Linux keeps those fields only
		 * for order > 1; the model makes no order-1 folios) */
		VM_BUG_ON_PAGE(order < 2, m, page);
		__SetPageHead(page);
		page->order = (uint8_t)order;
		for (uint64_t i = 1; i < nr; i++) {
			__SetPageTail(page + i);
			page[i].compound_head = (uint32_t)pfn;
		}
		atomic_set(&folio->_entire_mapcount, 0);
		atomic_set(&folio->_nr_pages_mapped, 0);
		atomic_set(&folio->_large_mapcount, 0);
		folio->_deferred_list.next = folio->_deferred_list.prev = NO_PFN;
		folio->_mm_id_0 = folio->_mm_id_1 = 0;
		folio->_mm_id_mapcount[0] = folio->_mm_id_mapcount[1] = 0;
		folio->_mm_ids_shared = 0;
	}
	if (gfp & __GFP_PGTABLE)
		__SetPageTable(page);
}

/*
 * rmqueue_bulk: fill a frame cache with "count" frames, leaving the free
 * lists exactly as "count" calls of __rmqueue(m, 0) would, without walking
 * the lists once per frame.  Each such call takes the smallest free block
 * and gives back its upper halves, one to each lower order, so once it has
 * split a block of order o (every list below o being empty) the calls that
 * follow take that block's frames bottom-up, and after r of them what is
 * left of it is [r, 2^o) cut at each alignment: at offset p a block of
 * p & -p frames.  Each of those orders then lists that one block alone,
 * so where in its list it stands cannot differ either.  The frames go on
 * the stack in the order taken (stack[*n] on, *n counting them), so the
 * last taken is the first out, as __rmqueue's frames pushed one by one
 * would be.  Zone lock held.
 */
void rmqueue_bulk(struct thps_machine *m, uint32_t *stack, int *n, int count)
{
	while (count > 0) {
		unsigned o;
		int64_t pfn = take_smallest_block(m, 0, &o);
		uint64_t size, take;

		if (pfn < 0)
			return;
		size = 1UL << o;
		take = (uint64_t)count < size ? (uint64_t)count : size;
		for (uint64_t i = 0; i < take; i++)
			pcp_push(m, stack, n, (uint32_t)(pfn + i));
		for (uint64_t p = take, b; p < size; p += b) {
			b = p & -p;
			add_to_free_list(m, (uint32_t)(pfn + p), (unsigned)__builtin_ctzll(b));
		}
		m->zone.nr_free_pages -= take;
		count -= (int)take;
	}
}

/* A frame from the cache, refilled when empty (a parked cache, else a
 * batch from the lists); -1 when there is none.  pcp lock held. */
static inline __attribute__((always_inline)) int64_t pcp_take(struct thps_machine *m,
							       struct per_cpu_pages *pcp)
{
	if (!pcp->count && !adopt_pcp(m, pcp)) {
		spin_lock(&m->zone.lock);
		rmqueue_bulk(m, pcp->pfn, &pcp->count, PCP_BATCH);
		spin_unlock(&m->zone.lock);
		if (!pcp->count)
			return -1;
	}
	return pcp_pop(m, pcp->pfn, &pcp->count);
}

static int64_t rmqueue(struct thps_machine *m, struct mm_struct *mm, unsigned order)
{
	int64_t pfn;

	if (order == 0 && mm) {
		raw_spin_lock(&mm->pcp.lock);
		pfn = pcp_take(m, &mm->pcp);
		raw_spin_unlock(&mm->pcp.lock);
		return pfn;
	}
	spin_lock(&m->zone.lock);
	pfn = __rmqueue(m, order);
	if (pfn >= 0)
		m->zone.nr_free_pages -= 1UL << order;
	spin_unlock(&m->zone.lock);
	return pfn;
}

struct page *alloc_pages(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp, unsigned order)
{
	int64_t pfn;

	VM_BUG_ON(order > MAX_PAGE_ORDER);
	if (should_fail_alloc(m, gfp))
		return NULL;
	pfn = rmqueue(m, mm, order);
	/* parked caches are free memory the lists lack: take them back
	 * before anything fails, as if their processes had drained them */
	if (pfn < 0 && drain_pcp_pool(m))
		pfn = rmqueue(m, mm, order);
	if (pfn < 0 && (gfp & __GFP_RECLAIM)) {
		/* direct reclaim: caches back to the lists, shrinkers, retry */
		drain_all_pages(m);
		shrink_slab(m, mm);
		pfn = rmqueue(m, mm, order);
	}
	/* __alloc_pages_may_oom: the machine is full; costly orders and
	 * __GFP_NORETRY fail instead; each kill frees a victim's memory */
	while (pfn < 0 && READ_ONCE(m->global_oom) && (gfp & __GFP_RECLAIM) &&
	       !(gfp & __GFP_NORETRY) && order <= 3 && out_of_memory(m, mm)) {
		drain_all_pages(m);
		pfn = rmqueue(m, mm, order);
	}
	if (pfn < 0)
		return NULL;
	prep_new_page(m, (uint64_t)pfn, order, gfp);
	if (gfp & __GFP_PGTABLE)
		mod_node_page_state(m, mm, THPS_VM_nr_page_table_pages, 1);
	return pfn_to_page(m, (uint64_t)pfn);
}

/* A frame being freed forgets its use; PG_zeroed stays. */
static inline __attribute__((always_inline)) void
free_frame_prepare(struct thps_machine *m, struct page *p)
{
	VM_BUG_ON_PAGE(atomic_read(&p->_mapcount) != 0, m, p);
	set_flags_nonatomic(p, test_bit_flags(p, PG_zeroed) << PG_zeroed);
	atomic_set(&p->_refcount, 0);
	p->order = 0;
	p->index = 0;
}

/* free_pages_prepare: the frames forget their use; PG_zeroed stays. */
static inline __attribute__((always_inline)) void
free_pages_prepare(struct thps_machine *m, struct mm_struct *mm, struct page *page, unsigned order)
{
	uint64_t nr = 1UL << order;

	VM_BUG_ON_PAGE(PageReserved(page) || PageBuddy(page) || PageTail(page), m, page);
	VM_BUG_ON_PAGE(!IS_ALIGNED(page_to_pfn(m, page), nr), m, page);
	if (PageTable(page))
		mod_node_page_state(m, mm, THPS_VM_nr_page_table_pages, -1);
	if (test_bit_flags(page, PG_memcg)) /* every frame is, or none */
		mem_cgroup_uncharge(m, nr, PageTable(page));
	for (uint64_t i = 0; i < nr; i++)
		free_frame_prepare(m, page + i);
}

/* An order-0 frame into mm's cache, a batch back to the buddy lists when
 * that takes it over PCP_HIGH.  pcp lock held. */
static inline __attribute__((always_inline)) void
free_frame_to_pcp(struct thps_machine *m, struct per_cpu_pages *pcp, struct page *page)
{
	VM_BUG_ON(pcp->count > PCP_HIGH);
	pcp_push(m, pcp->pfn, &pcp->count, (uint32_t)page_to_pfn(m, page));
	if (pcp->count > PCP_HIGH)
		free_pcppages_bulk(m, pcp, PCP_BATCH);
}

/*
 * alloc_pages_bulk: up to n order-0 frames for mm, the ones n calls of
 * alloc_pages(m, mm, gfp, 0) in a row hand out while each succeeds at its
 * first try: from mm's cache, refilled as it empties just as rmqueue
 * refills it.  It stops where the lists have run dry, having taken
 * nothing for that frame (rmqueue's attempts change nothing when they get
 * no frame), so the caller's alloc_pages for it, which drains and
 * reclaims, behaves as if this had not been called.  Nothing while
 * failures are injected: those count every call.  Returns how many.
 */
int alloc_pages_bulk(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp, struct page **pages,
		     int n)
{
	struct per_cpu_pages *pcp = &mm->pcp;
	int got = 0;

	VM_BUG_ON(gfp & (__GFP_COMP | __GFP_PGTABLE));
	if (unlikely(READ_ONCE(m->fail_counting)))
		return 0;
	raw_spin_lock(&pcp->lock);
	for (; got < n; got++) {
		int64_t pfn = pcp_take(m, pcp);

		if (pfn < 0)
			break;
		pages[got] = pfn_to_page(m, (uint64_t)pfn);
	}
	raw_spin_unlock(&pcp->lock);
	for (int i = 0; i < got; i++)
		prep_new_page(m, page_to_pfn(m, pages[i]), 0, gfp);
	return got;
}

/* free_unref_folios: order-0 frames into mm's cache, in order, under one
 * lock; a batch goes back to the lists each time the cache passes
 * PCP_HIGH. */
static void free_unref_pages(struct thps_machine *m, struct mm_struct *mm, struct page **pages,
			     int n)
{
	if (!n)
		return;
	for (int i = 0; i < n; i++)
		free_pages_prepare(m, mm, pages[i], 0);
	raw_spin_lock(&mm->pcp.lock);
	for (int i = 0; i < n; i++)
		free_frame_to_pcp(m, &mm->pcp, pages[i]);
	raw_spin_unlock(&mm->pcp.lock);
}

void free_pages(struct thps_machine *m, struct mm_struct *mm, struct page *page, unsigned order)
{
	if (order == 0 && mm) {
		free_unref_pages(m, mm, &page, 1);
		return;
	}
	free_pages_prepare(m, mm, page, order);
	spin_lock(&m->zone.lock);
	__free_one_page(m, page_to_pfn(m, page), order);
	m->zone.nr_free_pages += 1UL << order;
	spin_unlock(&m->zone.lock);
}

/* A folio nobody holds a reference to any more goes back to the
 * allocator (a large one off the deferred-split queue first). */
static void free_folio(struct thps_machine *m, struct mm_struct *mm, struct folio *folio)
{
	VM_BUG_ON_PAGE(folio_mapped(folio), m, (struct page *)folio);
	if (folio_test_large(folio)) {
		folio_undo_large_rmappable(m, folio);
		if (folio_test_anon(folio))
			mod_mthp_stat(m, folio_order(folio), THPS_MTHP_nr_anon, -1);
	}
	free_pages(m, mm, (struct page *)folio, folio_order(folio));
}

void folio_put_refs(struct thps_machine *m, struct mm_struct *mm, struct folio *folio, int refs)
{
	/* atomic even for an unshared page: the deferred-split shrinker drops
	 * the reference it took from the queue after its split, without the
	 * lock of the process that maps what is then an order-0 page */
	if (atomic_add_return(-refs, &folio->_refcount) != 0) {
		VM_BUG_ON_PAGE(folio_ref_count(folio) < 0, m, (struct page *)folio);
		return;
	}
	free_folio(m, mm, folio);
}

void folio_put(struct thps_machine *m, struct mm_struct *mm, struct folio *folio)
{
	folio_put_refs(m, mm, folio, 1);
}

/*
 * Drop the references of a process that has just unmapped them, and tell
 * whether they were the last.  An order-0 page it mapped exclusively
 * (page_unshared) whose count is just those references is held by nobody
 * else, and nobody else can take a reference to it without that process's
 * lock, which the caller holds: the deferred-split shrinker, which drops
 * its reference without that lock, takes it while the folio is large and
 * splits under the lock, so while it holds one the count shows it.  Such a
 * count is set to zero with a plain store; any other goes down atomically.
 */
static bool folio_unmapped_put_testzero(struct folio *folio, int refs)
{
	if (page_unshared((struct page *)folio) &&
	    __atomic_load_n(&folio->_refcount.counter, __ATOMIC_ACQUIRE) == refs) {
		atomic_set(&folio->_refcount, 0);
		return true;
	}
	return atomic_add_return(-refs, &folio->_refcount) == 0;
}

/*
 * folios_put_refs (Linux frees a zap's gathered folios so, after
 * tlb_flush_mmu): drop refs[i] references on folios[i], in order, and free
 * each that has no reference left; the order-0 ones go to mm's cache
 * together, under one lock.  Caller holds mm's lock, and mm mapped each
 * folio until now.
 */
void folios_put_refs(struct thps_machine *m, struct mm_struct *mm, struct folio **folios,
		     const int *refs, int n)
{
	struct page *order0[FOLIO_BATCH_MAX];
	int n0 = 0;

	VM_BUG_ON(n > FOLIO_BATCH_MAX || !mm);
	for (int i = 0; i < n; i++) {
		struct folio *folio = folios[i];

		if (!folio_unmapped_put_testzero(folio, refs[i])) {
			VM_BUG_ON_PAGE(folio_ref_count(folio) < 0, m, (struct page *)folio);
			continue;
		}
		if (!folio_test_large(folio)) {
			VM_BUG_ON_PAGE(folio_mapped(folio), m, (struct page *)folio);
			order0[n0++] = (struct page *)folio;
			continue;
		}
		/* frees in the order of the references dropped */
		free_unref_pages(m, mm, order0, n0);
		n0 = 0;
		free_folio(m, mm, folio);
	}
	free_unref_pages(m, mm, order0, n0);
}

size_t thps_frame_metadata_bytes(void)
{
	return sizeof(struct page);
}

/* ---- setup ---- */
int page_alloc_init(struct thps_machine *m, uint64_t nr_frames)
{
	if (nr_frames < 2 * (1UL << MAX_PAGE_ORDER) || nr_frames > (uint64_t)NO_PFN)
		return -EINVAL;
	m->nr_frames = nr_frames;
	m->ram = map_reserve(nr_frames << PAGE_SHIFT);
	m->mem_map = map_reserve(nr_frames * sizeof(struct page));
	if (!m->ram || !m->mem_map) {
		page_alloc_exit(m);
		return -ENOMEM;
	}
	spin_lock_init(&m->zone.lock);
	spin_lock_init(&m->pcp_pool.lock);
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		m->zone.free_area[o].head = NO_PFN;
		m->zone.free_area[o].nr_free = 0;
	}
	m->zone.metadata_committed = 0;
	commit_metadata(m, 1UL << MAX_PAGE_ORDER);
	/* Frame 0 is the shared zero page (the kernel keeps it in its image). */
	m->zero_pfn = 0;
	SetPageReserved(pfn_to_page(m, 0));
	SetPageZeroed(pfn_to_page(m, 0));
	m->totalram_pages = nr_frames - 1;
	m->zone.nr_free_pages = m->totalram_pages;
	/* Frames 1 .. the first max-order boundary go on the lists now. */
	m->zone.wilderness = 1UL << MAX_PAGE_ORDER;
	for (uint64_t pfn = 1; pfn < m->zone.wilderness;) {
		unsigned order = (unsigned)__builtin_ctzll(pfn);

		for (uint64_t i = 0; i < (1UL << order); i++)
			SetPageZeroed(pfn_to_page(m, pfn + i));
		add_to_free_list(m, (uint32_t)pfn, order);
		pfn += 1UL << order;
	}
	return 0;
}

/*
 * thps_shape_free: the machine's free memory made exactly blocks[o] free
 * blocks of each order o, as /proc/buddyinfo counts a real machine's (a
 * guest whose memory is fragmented, or mostly reserved as hugetlb pages);
 * every other frame is taken out for good (PG_reserved, as memory the
 * kernel holds).  A free block of order below the largest is laid beside
 * a reserved buddy, so no two merge.  Before any process exists.
 * -EBUSY once memory is in use, -ENOSPC when the machine is too small
 * (it needs 2^(o+1) frames for each such block, past the first 4 MiB).
 */
int thps_shape_free(thps_machine *m, const uint64_t *blocks, int n)
{
	uint64_t need = 1UL << MAX_PAGE_ORDER, cursor;

	if (n < 1 || n > NR_PAGE_ORDERS)
		return -EINVAL;
	for (int o = 0; o < n; o++)
		need += blocks[o] << (o + (o < MAX_PAGE_ORDER));
	if (need > m->nr_frames)
		return -ENOSPC;
	spin_lock(&m->zone.lock);
	if (m->procs || m->zone.nr_free_pages != m->totalram_pages) {
		spin_unlock(&m->zone.lock);
		return -EBUSY;
	}
	/* everything taken: the lists emptied, the wilderness carved */
	while (carve_wilderness(m))
		;
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		while (m->zone.free_area[o].head != NO_PFN) {
			uint32_t pfn = m->zone.free_area[o].head;

			del_from_free_list(m, pfn, (unsigned)o);
			for (uint64_t i = 0; i < (1UL << o); i++)
				SetPageReserved(pfn_to_page(m, pfn + i));
		}
	m->zone.nr_free_pages = 0;
	/* then the blocks given back, the largest first, past the first
	 * max-order block (the zero page's) */
	cursor = 1UL << MAX_PAGE_ORDER;
	for (int o = n - 1; o >= 0; o--)
		for (uint64_t k = 0; k < blocks[o]; k++) {
			for (uint64_t i = 0; i < (1UL << o); i++)
				ClearPageReserved(pfn_to_page(m, cursor + i));
			add_to_free_list(m, (uint32_t)cursor, (unsigned)o);
			m->zone.nr_free_pages += 1UL << o;
			cursor += 1UL << (o + (o < MAX_PAGE_ORDER));
		}
	spin_unlock(&m->zone.lock);
	return 0;
}

void page_alloc_exit(struct thps_machine *m)
{
	if (m->ram)
		munmap(m->ram, m->nr_frames << PAGE_SHIFT);
	if (m->mem_map)
		munmap(m->mem_map, m->nr_frames * sizeof(struct page));
	m->ram = NULL;
	m->mem_map = NULL;
	spin_lock_destroy(&m->zone.lock);
	spin_lock_destroy(&m->pcp_pool.lock);
}
