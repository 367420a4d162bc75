/*
 * memcontrol.c - the memory cgroup the machine's processes are in: its page
 * counter, memory.max and memory.high, reclaim under them, and the call to
 * the OOM killer (mirrors mm/memcontrol.c's try_charge_memcg,
 * mem_cgroup_charge and reclaim_high, mm/page_counter.c, and the memcg
 * half of mm/vmscan.c and mm/shrinker.c).
 *
 * Entry points: mem_cgroup_charge (a new folio or page-table page),
 * mem_cgroup_charge_bulk (the fault run's pages, no reclaim),
 * mem_cgroup_uncharge (from the allocator's free path), thps_memcg_*.
 *
 * What is charged, as in Linux: every anonymous folio when a fault, a
 * copy-on-write or a collapse allocates it, in its whole size at once (a
 * THP 512 pages), and every page-table page (GFP_PGTABLE_USER is
 * __GFP_ACCOUNT).  A charge lasts while the frames are allocated: a THP
 * that nothing maps in part stays charged in full until the deferred-split
 * shrinker splits it and frees the pages nothing maps.  The zero pages
 * are the kernel's and never charged.
 *
 * A charge over memory.max (try_charge_memcg):
 *  - with no direct reclaim in its gfp (a THP under defrag "madvise" in a
 *    VMA without MADV_HUGEPAGE, "defer", "never") fails at once;
 *  - else reclaims and tries again: a pass of reclaim after the first
 *    failure, one more after draining the per-CPU stock, then, unless the
 *    gfp says __GFP_NORETRY (a THP under defrag "always" without
 *    MADV_HUGEPAGE), sixteen more (MAX_RECLAIM_RETRIES);
 *  - then, for an order-0 charge (orders above PAGE_ALLOC_COSTLY_ORDER
 *    never invoke it: mem_cgroup_oom), the OOM killer (oom_kill.c), and
 *    the sixteen retries again after each kill; a charge that is still
 *    over fails, which a fault turns into VM_FAULT_OOM.  A charging
 *    process that is the victim goes through those retries too before
 *    its charge fails (passed_oom && task_is_dying): 35 passes in all,
 *    as Linux 6.1's memory.events max shows for a program killed at its
 *    own fault.
 * A THP or mTHP fault whose charge fails falls back to the next order
 * (thp_fault_fallback_charge, anon_fault_fallback_charge).
 *
 * Reclaim with no swap (try_to_free_mem_cgroup_pages): anonymous pages
 * cannot be written anywhere, so what frees memory is the memcg-aware
 * shrinkers, of which the model has one: the deferred-split queue's
 * (split partially mapped THPs and free what nothing maps; on 6.12+ split
 * underused THPs and map their zero-filled pages to the zero page).  The
 * huge zero page's shrinker is not memcg-aware and runs only in global
 * reclaim (vmscan.c).  A pass goes through the priorities 12 down to 0,
 * each asking the shrinker for (queue >> priority) * 4 / seeks objects
 * plus the work deferred from earlier passes, in batches of 128
 * (do_shrink_slab); pages a shrinker frees do not count as reclaimed in
 * memcg reclaim (Linux 6.4+, flush_reclaim_state), so a pass always goes
 * down to priority 0.
 *
 * The charge stock (memcg_stock_pcp): a charge of up to 64 pages takes
 * them from the stock when it holds enough, else charges 64 at once where
 * they fit and keeps the rest; a page table freed gives its page back to
 * the stock (obj_cgroup_uncharge_pages), a stock over 64 is given back
 * whole, and a charge that reclaim could not satisfy drains it.  The stock
 * is in memory.current and memory.peak: it is why a THP charge fails a few
 * pages early and the 4 KiB pages after it still fit.  Linux keeps one per
 * CPU; the model has one (a program on one CPU at a time).
 *
 * Divergences: one stock, not one per CPU; the program's file pages,
 * kernel stacks and slab objects are not charged (they are not in the
 * trace); memory.high's throttling is time, which the model does not
 * have: only its reclaim is made.
 */
#include "internal.h"

#define MAX_RECLAIM_RETRIES 16
#define DEF_PRIORITY 12
#define DEFAULT_SEEKS 2
#define SHRINK_BATCH 128
#define PAGE_ALLOC_COSTLY_ORDER 3
#define MEMCG_CHARGE_BATCH 64

static const char *const memcg_event_names[] = {
#define THPS_NAME_ITEM(name) #name,
	THPS_MEMCG_EVENTS(THPS_NAME_ITEM)
#undef THPS_NAME_ITEM
};

const char *thps_memcg_event_name(int event)
{
	return event >= 0 && event < THPS_NR_MEMCG_EVENTS ? memcg_event_names[event] : NULL;
}

void mem_cgroup_init(struct thps_machine *m)
{
	struct mem_cgroup *memcg = &m->memcg;

	memset(memcg, 0, sizeof(*memcg));
	spin_lock_init(&memcg->lock);
	memcg->max = memcg->high = UINT64_MAX;
}

void mem_cgroup_exit(struct thps_machine *m)
{
	spin_lock_destroy(&m->memcg.lock);
}

static void memcg_memory_event(struct mem_cgroup *memcg, enum thps_memcg_event ev)
{
	__atomic_fetch_add(&memcg->events[ev], 1, __ATOMIC_RELAXED);
}

/* page_counter_try_charge: nr pages more, unless that goes over max. */
static bool page_counter_try_charge(struct mem_cgroup *memcg, uint64_t nr)
{
	int64_t old = atomic64_read(&memcg->usage), peak;

	do {
		if ((uint64_t)old + nr > READ_ONCE(memcg->max))
			return false;
	} while (!__atomic_compare_exchange_n(&memcg->usage.counter, &old, old + (int64_t)nr, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	/* the watermark: memory.peak */
	peak = atomic64_read(&memcg->watermark);
	while (old + (int64_t)nr > peak &&
	       !__atomic_compare_exchange_n(&memcg->watermark.counter, &peak, old + (int64_t)nr,
					    true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return true;
}

/* consume_stock: nr pages from the stock, if it holds them. */
static bool consume_stock(struct mem_cgroup *memcg, uint64_t nr)
{
	int64_t old = atomic64_read(&memcg->stock);

	do {
		if (old < (int64_t)nr)
			return false;
	} while (!__atomic_compare_exchange_n(&memcg->stock.counter, &old, old - (int64_t)nr, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* drain_stock: the stock's pages back to the counter. */
static void drain_stock(struct mem_cgroup *memcg)
{
	int64_t n = __atomic_exchange_n(&memcg->stock.counter, 0, __ATOMIC_RELAXED);

	atomic64_add(-n, &memcg->usage);
}

/* refill_stock: nr charged pages into the stock; over a batch, all back. */
static void refill_stock(struct mem_cgroup *memcg, uint64_t nr)
{
	if (__atomic_add_fetch(&memcg->stock.counter, (int64_t)nr, __ATOMIC_RELAXED) >
	    MEMCG_CHARGE_BATCH)
		drain_stock(memcg);
}

/* A charge that needs no reclaim: from the stock, or a batch (the rest
 * into the stock), or exactly nr. */
static bool try_charge_quick(struct mem_cgroup *memcg, uint64_t nr)
{
	if (nr <= MEMCG_CHARGE_BATCH && consume_stock(memcg, nr))
		return true;
	if (nr < MEMCG_CHARGE_BATCH && page_counter_try_charge(memcg, MEMCG_CHARGE_BATCH)) {
		refill_stock(memcg, MEMCG_CHARGE_BATCH - nr);
		return true;
	}
	return page_counter_try_charge(memcg, nr);
}

static uint64_t mem_cgroup_margin(struct mem_cgroup *memcg)
{
	uint64_t usage = (uint64_t)atomic64_read(&memcg->usage), max = READ_ONCE(memcg->max);

	return usage < max ? max - usage : 0;
}

/*
 * do_shrink_slab for the deferred-split shrinker at one priority: the
 * objects to scan are this priority's share of the queue plus the share of
 * the work deferred so far, scanned in batches while there is a batch's
 * worth or the whole queue's; what is left is deferred, at most twice the
 * queue.
 */
static void shrink_deferred_split(struct thps_machine *m, struct mm_struct *held, int priority)
{
	struct mem_cgroup *memcg = &m->memcg;
	int64_t freeable = (int64_t)deferred_split_count(m), nr, delta, total_scan, scanned = 0;
	int64_t next_deferred;

	if (!freeable)
		return;
	spin_lock(&memcg->lock);
	nr = memcg->nr_deferred;
	memcg->nr_deferred = 0;
	spin_unlock(&memcg->lock);
	delta = (freeable >> priority) * 4 / DEFAULT_SEEKS;
	total_scan = (nr >> priority) + delta;
	if (total_scan > 2 * freeable)
		total_scan = 2 * freeable;
	while (total_scan >= SHRINK_BATCH || total_scan >= freeable) {
		int64_t nr_to_scan = total_scan < SHRINK_BATCH ? total_scan : SHRINK_BATCH;

		deferred_split_scan(m, held, (unsigned long)nr_to_scan);
		total_scan -= nr_to_scan;
		scanned += nr_to_scan;
	}
	next_deferred = nr + delta - scanned;
	if (next_deferred < 0)
		next_deferred = 0;
	if (next_deferred > 2 * freeable)
		next_deferred = 2 * freeable;
	spin_lock(&memcg->lock);
	memcg->nr_deferred += next_deferred;
	spin_unlock(&memcg->lock);
}

/*
 * try_to_free_mem_cgroup_pages with no swap: the priorities from 12 down
 * to 0, each a round of the memcg-aware shrinkers.  What they free is not
 * counted as reclaimed, so it returns 0: the caller looks at the margin.
 */
static void try_to_free_mem_cgroup_pages(struct thps_machine *m, struct mm_struct *held)
{
	for (int priority = DEF_PRIORITY; priority >= 0; priority--)
		shrink_deferred_split(m, held, priority);
}

/* The process whose fault charges has been chosen by the OOM killer. */
static bool task_is_dying(const struct mm_struct *mm)
{
	return mm && mm_flag_test(mm, MMF_OOM_VICTIM);
}

/*
 * try_charge_memcg: 0, or -ENOMEM when nr pages do not fit under
 * memory.max after what gfp allows (see the top of the file).  mm is the
 * charging process (NULL: none, as for khugepaged's own work).
 */
static int try_charge_memcg(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp, uint64_t nr)
{
	struct mem_cgroup *memcg = &m->memcg;
	int nr_retries = MAX_RECLAIM_RETRIES;
	bool drained = false, passed_oom = false;

	for (;;) {
		if (try_charge_quick(memcg, nr))
			break;
		if (!(gfp & __GFP_RECLAIM))
			return -ENOMEM;
		memcg_memory_event(memcg, THPS_MEMCG_max);
		try_to_free_mem_cgroup_pages(m, mm);
		if (mem_cgroup_margin(memcg) >= nr)
			continue;
		if (!drained) {
			drain_stock(memcg); /* drain_all_stock */
			drained = true;
			continue;
		}
		if (gfp & __GFP_NORETRY)
			return -ENOMEM;
		if (nr_retries--)
			continue;
		if (passed_oom && task_is_dying(mm))
			return -ENOMEM;
		/* mem_cgroup_oom: costly orders fall back instead */
		if (nr > (1UL << PAGE_ALLOC_COSTLY_ORDER))
			return -ENOMEM;
		memcg_memory_event(memcg, THPS_MEMCG_oom);
		/* out_of_memory: a victim already (task_will_free_mem) goes
		 * through the retries again, then fails above */
		if (!task_is_dying(mm) && !mem_cgroup_out_of_memory(m, mm))
			return -ENOMEM;
		passed_oom = true;
		nr_retries = MAX_RECLAIM_RETRIES;
	}
	/* memory.high: over it, reclaim before going back to the program
	 * (mem_cgroup_handle_over_high; its throttling is not modelled) */
	if ((uint64_t)atomic64_read(&memcg->usage) > READ_ONCE(memcg->high)) {
		memcg_memory_event(memcg, THPS_MEMCG_high);
		if (gfp & __GFP_RECLAIM)
			try_to_free_mem_cgroup_pages(m, mm);
	}
	return 0;
}

static void set_frames_charged(struct page *page, uint64_t nr)
{
	for (uint64_t i = 0; i < nr; i++)
		set_bit_flags(page + i, PG_memcg);
}

int mem_cgroup_charge(struct thps_machine *m, struct mm_struct *mm, struct page *page, gfp_t gfp)
{
	uint64_t nr = PageHead(page) ? 1UL << page->order : 1;
	int err = try_charge_memcg(m, mm, gfp, nr);

	if (!err)
		set_frames_charged(page, nr);
	return err;
}

int mem_cgroup_charge_bulk(struct thps_machine *m, struct page **pages, int n)
{
	struct mem_cgroup *memcg = &m->memcg;
	int got = 0;

	/* as the page-by-page charges would while they need no reclaim; the
	 * rest are the caller's to free */
	while (got < n && try_charge_quick(memcg, 1))
		set_bit_flags(pages[got++], PG_memcg);
	return got;
}

void mem_cgroup_uncharge(struct thps_machine *m, uint64_t nr, bool kmem)
{
	if (kmem) /* a page table: obj_cgroup_uncharge_pages refills the stock */
		refill_stock(&m->memcg, nr);
	else
		atomic64_add(-(int64_t)nr, &m->memcg.usage);
}

/* ---- the control files ---- */

static uint64_t bytes_to_pages(uint64_t bytes)
{
	return bytes == THPS_MEMCG_NOLIMIT ? UINT64_MAX : bytes >> PAGE_SHIFT;
}

int thps_memcg_set_limits(thps_machine *m, uint64_t max_bytes, uint64_t high_bytes)
{
	spin_lock(&m->memcg.lock);
	WRITE_ONCE(m->memcg.max, bytes_to_pages(max_bytes));
	WRITE_ONCE(m->memcg.high, bytes_to_pages(high_bytes));
	spin_unlock(&m->memcg.lock);
	return 0;
}

void thps_memcg_set_oom_group(thps_machine *m, int group)
{
	spin_lock(&m->memcg.lock);
	m->memcg.oom_group = group != 0;
	spin_unlock(&m->memcg.lock);
}

static uint64_t pages_to_bytes(uint64_t pages)
{
	return pages == UINT64_MAX ? THPS_MEMCG_NOLIMIT : pages << PAGE_SHIFT;
}

void thps_memcg_read(thps_machine *m, struct thps_memcg_stat *out)
{
	struct mem_cgroup *memcg = &m->memcg;

	spin_lock(&memcg->lock);
	out->current_bytes = (uint64_t)atomic64_read(&memcg->usage) << PAGE_SHIFT;
	out->peak_bytes = (uint64_t)atomic64_read(&memcg->watermark) << PAGE_SHIFT;
	out->max_bytes = pages_to_bytes(memcg->max);
	out->high_bytes = pages_to_bytes(memcg->high);
	for (int i = 0; i < THPS_NR_MEMCG_EVENTS; i++)
		out->events[i] = __atomic_load_n(&memcg->events[i], __ATOMIC_RELAXED);
	spin_unlock(&memcg->lock);
}

uint64_t thps_memcg_event(thps_machine *m, int event)
{
	if (event < 0 || event >= THPS_NR_MEMCG_EVENTS)
		return 0;
	return __atomic_load_n(&m->memcg.events[event], __ATOMIC_RELAXED);
}

void thps_memcg_reset_peak(thps_machine *m)
{
	atomic64_set(&m->memcg.watermark, atomic64_read(&m->memcg.usage));
}
