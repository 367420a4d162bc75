/*
 * test_fault_run.c - faults taken a run at a time against faults taken one
 * by one.
 *
 * A touch of consecutive pages takes the first-touch faults of the pages
 * that follow in the same PTE table together (handle_pte_fault_run, with
 * frames from alloc_pages_bulk).  That is a shortcut, not a behaviour: it
 * must leave every byte of the machine as the faults taken one by one
 * would.  Two machines run the same random operations (mmap, touches of
 * every kind, munmap, mremap, mprotect, madvise, fork, exit, dropped
 * caches, injected allocation failures, memory running out; each seed
 * with its own THP settings and kernel preset), one with the runs
 * turned off (one_at_a_time); every answer is compared, and every few
 * operations the whole state: frame metadata and frame bytes (the page
 * tables are frames too), the buddy lists' heads and counts, each
 * process's frame cache and the parked ones, every counter.
 */
#include "../test.h"
#include "internal.h"

#define RAM_MIB 48
#define MAX_PROCS 4
#define MAX_REGIONS 8
#define OPS 400
#define RW (THPS_PROT_READ | THPS_PROT_WRITE)

struct region {
	uint64_t start, len;
};

struct side {
	thps_machine *m;
	thps_proc *p[MAX_PROCS];
};

static struct side one, run; /* one: every fault alone; run: fault runs on */
static struct region regions[MAX_PROCS][MAX_REGIONS];
static int nregions[MAX_PROCS], nprocs;
static uint64_t rng, run_pages, nomem;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

static void same_state(const char *when, int op)
{
	struct thps_machine *a = one.m, *b = run.m;
	uint64_t va[THPS_NR_VM_ITEMS], vb[THPS_NR_VM_ITEMS];
	uint64_t frames = a->zone.wilderness > b->zone.wilderness ? a->zone.wilderness
								   : b->zone.wilderness;

	ASSERT_OK(thps_check(a));
	ASSERT_OK(thps_check(b));
	if (memcmp(a->mem_map, b->mem_map, frames * sizeof(struct page))) {
		for (uint64_t pfn = 0; pfn < frames; pfn++)
			if (memcmp(&a->mem_map[pfn], &b->mem_map[pfn], sizeof(struct page)))
				test_fail(__FILE__, __LINE__,
					  "%s (op %d): frame %" PRIu64 "'s metadata differs: flags %#x/%#x "
					  "refcount %d/%d mapcount %d/%d",
					  when, op, pfn, a->mem_map[pfn].flags, b->mem_map[pfn].flags,
					  atomic_read(&a->mem_map[pfn]._refcount),
					  atomic_read(&b->mem_map[pfn]._refcount),
					  atomic_read(&a->mem_map[pfn]._mapcount),
					  atomic_read(&b->mem_map[pfn]._mapcount));
	}
	for (uint64_t pfn = 0; pfn < frames; pfn++)
		if (memcmp(pfn_address(a, pfn), pfn_address(b, pfn), PAGE_SIZE))
			test_fail(__FILE__, __LINE__, "%s (op %d): frame %" PRIu64 "'s bytes differ%s",
				  when, op, pfn,
				  PageTable(&a->mem_map[pfn]) ? " (a page table)" : "");
	ASSERT_EQ(a->zone.wilderness, b->zone.wilderness);
	ASSERT_EQ(a->zone.nr_free_pages, b->zone.nr_free_pages);
	for (unsigned o = 0; o <= MAX_PAGE_ORDER; o++) {
		ASSERT_EQ(a->zone.free_area[o].head, b->zone.free_area[o].head);
		ASSERT_EQ(a->zone.free_area[o].nr_free, b->zone.free_area[o].nr_free);
	}
	ASSERT_EQ(a->pcp_pool.nr, b->pcp_pool.nr);
	for (int i = 0; i < a->pcp_pool.nr; i++) {
		ASSERT_EQ(a->pcp_pool.list[i].count, b->pcp_pool.list[i].count);
		ASSERT(!memcmp(a->pcp_pool.list[i].pfn, b->pcp_pool.list[i].pfn,
			       (size_t)a->pcp_pool.list[i].count * sizeof(uint32_t)));
	}
	for (int i = 0; i < nprocs; i++) {
		uint64_t fa[THPS_NR_PROC_ITEMS], fb[THPS_NR_PROC_ITEMS];
		struct per_cpu_pages *pa = &one.p[i]->mm.pcp, *pb = &run.p[i]->mm.pcp;

		ASSERT_EQ(pa->count, pb->count);
		ASSERT(!memcmp(pa->pfn, pb->pfn, (size_t)pa->count * sizeof(uint32_t)));
		ASSERT_OK(thps_proc_figures(one.p[i], fa));
		ASSERT_OK(thps_proc_figures(run.p[i], fb));
		for (int k = 0; k < THPS_NR_PROC_ITEMS; k++)
			if (fa[k] != fb[k])
				test_fail(__FILE__, __LINE__, "%s (op %d): process %d's %s: %" PRIu64
					  " alone, %" PRIu64 " in runs", when, op, i,
					  thps_proc_item_name(k), fa[k], fb[k]);
	}
	thps_vmstat(a, va);
	thps_vmstat(b, vb);
	for (int k = 0; k < THPS_NR_VM_ITEMS; k++)
		if (va[k] != vb[k])
			test_fail(__FILE__, __LINE__, "%s (op %d): %s: %" PRIu64 " alone, %" PRIu64
				  " in runs", when, op, thps_vm_item_name(k), va[k], vb[k]);
}

/* A random part of a random region of process i: page-aligned start, and a
 * length that may run past the region's end. */
static int pick(int i, uint64_t *start, uint64_t *len)
{
	const struct region *r;
	uint64_t pages, first;

	if (!nregions[i])
		return 0;
	r = &regions[i][rnd((uint64_t)nregions[i])];
	pages = r->len / PAGE;
	first = rnd(pages);
	*start = r->start + first * PAGE;
	*len = (1 + rnd(rnd(4) ? pages - first : 2 * pages)) * PAGE;
	return 1;
}

/* Count the pages process i's fault runs took (none on "one"). */
static void gone_runs(int i)
{
	ASSERT_EQ(one.p[i]->mm.fault_run_pages, 0);
	run_pages += (uint64_t)run.p[i]->mm.fault_run_pages;
}

#define BOTH(call_one, call_run)                                                          \
	do {                                                                               \
		int e1 = (call_one), e2 = (call_run);                                      \
		if (e1 != e2)                                                              \
			test_fail(__FILE__, __LINE__, "op %d: %s answers %d alone, %d in runs", \
				  op, #call_one, e1, e2);                                  \
		err = e1;                                                                  \
	} while (0)

static void step(int op)
{
	int i = (int)rnd((uint64_t)nprocs), err = 0;
	uint64_t start, len;

	switch (rnd(18)) {
	case 0:
	case 1: { /* mmap */
		static const int extra[] = { 0, 0, 0, THPS_MAP_POPULATE, THPS_MAP_STACK,
					     THPS_MAP_GROWSDOWN };
		uint64_t a1 = 0, a2 = 0, l = (1 + rnd(rnd(3) ? 1100 : 5000)) * PAGE;
		int prot = rnd(5) ? RW : THPS_PROT_READ;
		int flags = THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | extra[rnd(6)];

		if (nregions[i] == MAX_REGIONS)
			return;
		BOTH(thps_mmap(one.p[i], 0, l, prot, flags, &a1),
		     thps_mmap(run.p[i], 0, l, prot, flags, &a2));
		if (!err) {
			ASSERT_EQ(a1, a2);
			regions[i][nregions[i]++] = (struct region){ a1, l };
		}
		break;
	}
	case 2: case 3: case 4: case 5: case 6: case 7: { /* touch */
		static const enum thps_touch_op ops[] = { THPS_TOUCH_READ, THPS_TOUCH_DIRTY,
							  THPS_TOUCH_WRITE };
		struct thps_touch t1, t2;

		if (!pick(i, &start, &len))
			return;
		t1 = (struct thps_touch){ .addr = start + (rnd(4) ? 0 : rnd(PAGE)), .len = len,
					  .step = rnd(8) ? PAGE : (1 + rnd(3)) * PAGE / 2,
					  .op = ops[rnd(3)], .value = (uint8_t)rnd(3),
					  .check = (int)rnd(2) };
		if (!rnd(8) && len > PAGE)
			t1.len -= rnd(PAGE);
		t2 = t1;
		BOTH(thps_touch(one.p[i], &t1), thps_touch(run.p[i], &t2));
		ASSERT_EQ(t1.done, t2.done);
		nomem += err == -ENOMEM;
		ASSERT_EQ(t1.mismatches, t2.mismatches);
		break;
	}
	case 8: /* munmap */
		if (pick(i, &start, &len))
			BOTH(thps_munmap(one.p[i], start, len), thps_munmap(run.p[i], start, len));
		break;
	case 9: { /* mprotect */
		static const int prots[] = { RW, THPS_PROT_READ, THPS_PROT_NONE };
		int prot = prots[rnd(3)];

		if (pick(i, &start, &len))
			BOTH(thps_mprotect(one.p[i], start, len, prot),
			     thps_mprotect(run.p[i], start, len, prot));
		break;
	}
	case 10: { /* madvise */
		static const int advs[] = { THPS_MADV_HUGEPAGE, THPS_MADV_NOHUGEPAGE,
					    THPS_MADV_DONTNEED, THPS_MADV_FREE };
		int adv = advs[rnd(4)];

		if (pick(i, &start, &len))
			BOTH(thps_madvise(one.p[i], start, len, adv),
			     thps_madvise(run.p[i], start, len, adv));
		break;
	}
	case 11: /* fork */
		if (nprocs < MAX_PROCS) {
			BOTH(thps_fork(one.p[i], &one.p[nprocs]), thps_fork(run.p[i], &run.p[nprocs]));
			if (!err) {
				memcpy(regions[nprocs], regions[i], sizeof(regions[i]));
				nregions[nprocs] = nregions[i];
				nprocs++;
			}
		}
		break;
	case 12: /* exit */
		if (nprocs > 1) {
			gone_runs(i);
			thps_exit(one.p[i]);
			thps_exit(run.p[i]);
			nprocs--;
			one.p[i] = one.p[nprocs];
			run.p[i] = run.p[nprocs];
			memcpy(regions[i], regions[nprocs], sizeof(regions[i]));
			nregions[i] = nregions[nprocs];
		}
		break;
	case 13: /* memory pressure */
		thps_drop_caches(one.m);
		thps_drop_caches(run.m);
		break;
	case 14: /* an allocation that fails, soon (runs are off from then on) */
		if (op > OPS - 60 && !rnd(2)) {
			uint64_t nth = 1 + rnd(200);

			thps_fail_alloc(one.m, THPS_ALLOC_PAGE, nth, 0);
			thps_fail_alloc(run.m, THPS_ALLOC_PAGE, nth, 0);
		}
		break;
	case 15: { /* mremap: grow, shrink or move a region (it keeps its slot) */
		struct region *r;
		uint64_t a1 = 0, a2 = 0, nl;
		int flags = rnd(3) ? THPS_MREMAP_MAYMOVE : 0;

		if (!nregions[i])
			return;
		r = &regions[i][rnd((uint64_t)nregions[i])];
		nl = (1 + rnd(2 * r->len / PAGE)) * PAGE;
		BOTH(thps_mremap(one.p[i], r->start, r->len, nl, flags, 0, &a1),
		     thps_mremap(run.p[i], r->start, r->len, nl, flags, 0, &a2));
		if (!err) {
			ASSERT_EQ(a1, a2);
			*r = (struct region){ a1, nl };
		}
		break;
	}
	default: { /* a small write, page by page */
		uint8_t buf[64] = { 7 };

		if (pick(i, &start, &len))
			BOTH(thps_write(one.p[i], start, buf, sizeof(buf)),
			     thps_write(run.p[i], start, buf, sizeof(buf)));
		break;
	}
	}
	(void)err;
}

static void lockstep(uint64_t seed)
{
	static const char *const enabled[] = { "never", "madvise", "always" };
	static const char *const kernels[] = { "3.8", "4.9", "5.8", "6.13", "6.18" };
	struct thps_config cfg = { .ram_bytes = MB(RAM_MIB) };
	const char *e, *zero, *kernel;

	rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	e = enabled[rnd(3)];
	zero = rnd(2) ? "1" : "0";
	kernel = kernels[rnd(5)];
	ASSERT_OK(thps_machine_new(&cfg, &one.m));
	ASSERT_OK(thps_machine_new(&cfg, &run.m));
	one.m->one_at_a_time = true;
	for (int k = 0; k < 2; k++) {
		thps_machine *m = k ? run.m : one.m;

		ASSERT_OK(thps_knob_set(m, "thpsim/kernel", kernel));
		ASSERT_OK(thps_knob_set(m, "transparent_hugepage/enabled", e));
		ASSERT_OK(thps_knob_set(m, "transparent_hugepage/use_zero_page", zero));
	}
	ASSERT_OK(thps_proc_new(one.m, &one.p[0]));
	ASSERT_OK(thps_proc_new(run.m, &run.p[0]));
	nprocs = 1;
	memset(nregions, 0, sizeof(nregions));
	for (int op = 0; op < OPS; op++) {
		step(op);
		if (op % 25 == 24)
			same_state("during", op);
	}
	same_state("at the end", OPS);
	for (int i = 0; i < nprocs; i++)
		gone_runs(i);
	thps_machine_free(one.m);
	thps_machine_free(run.m);
}

TEST(fault_runs_leave_the_machine_as_faults_taken_one_by_one)
{
	run_pages = nomem = 0;
	for (uint64_t seed = 1; seed <= 12; seed++)
		lockstep(seed);
	/* the runs were taken, not just allowed */
	ASSERT_LE(10000, run_pages);
	/* and memory ran out in the middle of some (alloc_pages_bulk stops) */
	ASSERT_LE(1, nomem);
}
