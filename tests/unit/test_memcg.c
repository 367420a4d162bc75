/*
 * test_memcg.c - the memory cgroup (memcontrol.c, oom_kill.c): what is
 * charged and when it is uncharged, a charge over memory.max (fallback,
 * reclaim, the OOM killer) and memory.high.  The expected figures follow
 * the kernel's rules, cited at each test: mem_cgroup_charge on every new
 * anonymous folio in its whole size, __GFP_ACCOUNT on user page tables
 * (GFP_PGTABLE_USER: the PGD, PUD, PMD and PTE tables of x86-64's four
 * levels), try_charge_memcg's gfp rules, oom_badness.  The whole-state
 * checker also compares memory.current with the charged frames after
 * every step.
 */
#include "../test.h"

static struct thps_memcg_stat cg(void)
{
	struct thps_memcg_stat s;

	thps_memcg_read(T, &s);
	return s;
}

static int touch(thps_proc *p, uint64_t addr, uint64_t len, uint64_t step)
{
	struct thps_touch t = { .addr = addr, .len = len, .step = step, .op = THPS_TOUCH_WRITE,
				.value = 1 };

	return thps_touch(p, &t);
}

/* A new process charges its PGD: a charge of a page takes a batch of 64
 * (MEMCG_CHARGE_BATCH) and keeps 63 in the per-CPU stock, all in
 * memory.current.  A THP fault charges its PUD, PMD and the PTE table
 * deposited for a later split from that stock, and the 512 pages of the
 * THP at once (more than a batch: never from the stock).  At exit the
 * THP is uncharged and the page tables go back to the stock
 * (obj_cgroup_uncharge_pages), which keeps up to 64 pages. */
TEST(memcg_charges_a_thp_whole_and_the_page_tables)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	ASSERT_EQ(cg().current_bytes, 64 * PAGE);
	a = tmmap_aligned(p, MB(4));
	twrite(p, a, 1, 1, 7);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(cg().current_bytes, HPAGE + 64 * PAGE);
	ASSERT_EQ(cg().peak_bytes, HPAGE + 64 * PAGE);
	texit(p);
	ASSERT_EQ(cg().current_bytes, 64 * PAGE);
	ASSERT_EQ(cg().peak_bytes, HPAGE + 64 * PAGE);
}

/* MADV_DONTNEED of half a THP: the PMD is split, 256 pages unmapped, but
 * the folio is freed only as a whole, so all 512 stay charged until the
 * deferred-split shrinker splits it and frees the unmapped half (the
 * NuoDB and Kubernetes 114142 reports: usage the processes' RSS does not
 * show). */
TEST(memcg_a_partly_unmapped_thp_stays_charged_until_split)
{
	thps_proc *p;
	uint64_t a, before;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), PAGE, 7);
	before = cg().current_bytes;
	tmadvise(p, a + MB(1), MB(1), THPS_MADV_DONTNEED);
	ASSERT_EQ(fig(p, THPS_PROC_Anonymous), 1024);
	ASSERT_EQ(cg().current_bytes, before);
	tdrop_caches();
	ASSERT_EQ(cg().current_bytes, before - MB(1));
	texit(p);
}

/* A THP fault in a VMA without MADV_HUGEPAGE under defrag "madvise" has
 * no direct reclaim (GFP_TRANSHUGE_LIGHT): over memory.max its charge
 * fails at once, without raising memory.events max, and the fault falls
 * back to a 4 KiB page (thp_fault_fallback and thp_fault_fallback_charge). */
TEST(memcg_a_thp_charge_over_max_falls_back_without_reclaim)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "transparent_hugepage/enabled=always", "transparent_hugepage/defrag=madvise",
		 NULL);
	ASSERT_OK(thps_memcg_set_limits(T, MB(3), THPS_MEMCG_NOLIMIT));
	p = tproc();
	a = tmmap_aligned(p, MB(6));
	twrite(p, a, 1, 1, 7);
	twrite(p, a + MB(2), 1, 1, 7);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback_charge), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_Anonymous), 2048 + 4);
	ASSERT_EQ(cg().events[THPS_MEMCG_max], 0);
	ASSERT_EQ(cg().events[THPS_MEMCG_oom], 0);
	texit(p);
}

/* An order-0 charge that reclaim cannot make room for calls the OOM
 * killer, which takes the process with the most points (Rss + page
 * tables): the big one, whose memory is freed at once, and the fault that
 * asked goes on.  The victim's accesses fail from then on. */
TEST(memcg_the_oom_killer_takes_the_biggest_and_the_fault_goes_on)
{
	thps_proc *big, *small;
	uint64_t a, b;

	tmachine(64, "transparent_hugepage/enabled=never", NULL);
	ASSERT_OK(thps_memcg_set_limits(T, MB(8), THPS_MEMCG_NOLIMIT));
	big = tproc();
	small = tproc();
	a = tmmap_aligned(big, MB(6));
	b = tmmap_aligned(small, MB(4));
	twrite(big, a, MB(6), PAGE, 1);
	twrite(small, b, MB(1), PAGE, 1);
	ASSERT_EQ(thps_proc_oom_killed(big), 0);
	/* 8 MiB would be passed at the next MiB of "small" */
	twrite(small, b + MB(1), MB(2), PAGE, 1);
	ASSERT_EQ(thps_proc_oom_killed(big), 1);
	ASSERT_EQ(thps_proc_oom_killed(small), 0);
	ASSERT_EQ(cg().events[THPS_MEMCG_oom], 1);
	ASSERT_EQ(cg().events[THPS_MEMCG_oom_kill], 1);
	ASSERT_EQ(fig(big, THPS_PROC_Rss), 0);
	ASSERT_EQ(fig(small, THPS_PROC_Anonymous), 3072);
	ASSERT_EQ(touch(big, a, 1, 1), -EINTR);
	texit(big);
	texit(small);
}

/* When the faulting process is the one with the most points, it is the
 * victim: its access fails with -EINTR (the kernel's SIGKILL) and its
 * memory is freed when it exits.  oom_score_adj -1000 keeps a process
 * from being chosen even when it is the biggest. */
TEST(memcg_the_faulting_process_can_be_the_victim)
{
	thps_proc *p, *q;
	uint64_t a, b;

	tmachine(64, "transparent_hugepage/enabled=never", NULL);
	ASSERT_OK(thps_memcg_set_limits(T, MB(4), THPS_MEMCG_NOLIMIT));
	p = tproc();
	q = tproc();
	ASSERT_OK(thps_set_oom_score_adj(q, -1000));
	ASSERT_EQ(thps_set_oom_score_adj(q, -1001), -EINVAL);
	a = tmmap_aligned(p, MB(8));
	b = tmmap_aligned(q, MB(2));
	twrite(q, b, MB(2), PAGE, 1);
	ASSERT_EQ(touch(p, a, MB(8), PAGE), -EINTR);
	ASSERT_EQ(thps_proc_oom_killed(p), 1);
	ASSERT_EQ(thps_proc_oom_killed(q), 0);
	texit(p);
	tcheck();
	/* q's 2 MiB and 4 page tables, and up to a batch in the stock */
	ASSERT(cg().current_bytes >= MB(2) + 4 * PAGE);
	ASSERT_LE(cg().current_bytes, MB(2) + 4 * PAGE + 64 * PAGE);
	/* a limit at what is charged now: q alone goes over, and nobody may
	 * be chosen, so the fault fails */
	ASSERT_OK(thps_memcg_set_limits(T, cg().current_bytes, THPS_MEMCG_NOLIMIT));
	b = tmmap(q, 0, MB(2), THPS_PROT_READ | THPS_PROT_WRITE, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS);
	ASSERT_EQ(touch(q, b, MB(1), PAGE), -ENOMEM);
	ASSERT_EQ(thps_proc_oom_killed(q), 0);
	ASSERT_EQ(cg().events[THPS_MEMCG_oom], 1 + 1);
	texit(q);
}

/* Linux 6.12 with max_ptes_none 409 (Meta's setting): THPs with few
 * pages written are underused, and reclaim under the limit splits them
 * (thp_underused_split_page) and maps their zero-filled pages to the zero
 * page, which makes room for the faults that follow: no OOM kill.  With
 * max_ptes_none 511 (the default) thp_underused says no, nothing can be
 * freed, and the program is killed. */
TEST(memcg_reclaim_splits_underused_thps_under_the_limit)
{
	static const char *const mpn[] = { "409", "511" };

	for (int i = 0; i < 2; i++) {
		char knob[64];
		thps_proc *p;
		uint64_t a;
		int err;

		snprintf(knob, sizeof(knob), "transparent_hugepage/khugepaged/max_ptes_none=%s", mpn[i]);
		tmachine(256, "thpsim/kernel=6.12", "transparent_hugepage/enabled=always", knob,
			 NULL);
		ASSERT_OK(thps_memcg_set_limits(T, MB(20), THPS_MEMCG_NOLIMIT));
		p = tproc();
		a = tmmap_aligned(p, MB(64));
		/* one byte every 64 KiB: 32 pages of each THP written */
		err = touch(p, a, MB(64), KB(64));
		tcheck();
		if (i == 0) {
			ASSERT_EQ(err, 0);
			ASSERT(vm_delta(THPS_VM_thp_underused_split_page) > 0);
			ASSERT_EQ(cg().events[THPS_MEMCG_oom_kill], 0);
			ASSERT_LE(cg().peak_bytes, MB(20));
			ASSERT_EQ(fig(p, THPS_PROC_Rss) % 4, 0);
		} else {
			ASSERT_EQ(err, -EINTR);
			ASSERT_EQ(vm_delta(THPS_VM_thp_underused_split_page), 0);
			ASSERT_EQ(cg().events[THPS_MEMCG_oom_kill], 1);
		}
		texit(p);
	}
}

/* memory.high: a charge that ends above it reclaims (here the deferred
 * split of a partly unmapped THP) and raises memory.events high, and kills
 * nobody. */
TEST(memcg_high_reclaims_without_killing)
{
	thps_proc *p;
	uint64_t a, b;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, MB(2), PAGE, 7);
	tmadvise(p, a + KB(4), MB(2) - KB(4), THPS_MADV_DONTNEED);
	ASSERT_OK(thps_memcg_set_limits(T, THPS_MEMCG_NOLIMIT, MB(1)));
	b = tmmap(p, 0, MB(1), THPS_PROT_READ | THPS_PROT_WRITE, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS);
	twrite(p, b, 1, 1, 7);
	ASSERT(cg().events[THPS_MEMCG_high] >= 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_page), 1);
	ASSERT(cg().current_bytes < MB(1));
	ASSERT_EQ(cg().events[THPS_MEMCG_oom_kill], 0);
	texit(p);
}

/* The machine's own OOM killer (thps_set_global_oom): on a full machine an
 * order-0 allocation that reclaim cannot satisfy kills the process with
 * the most points and is tried again (out_of_memory); off, the fault
 * fails with -ENOMEM as before. */
TEST(memcg_the_global_oom_killer_when_the_machine_is_full)
{
	for (int on = 0; on < 2; on++) {
		thps_proc *big, *small;
		uint64_t a, b;
		int err;

		tmachine(32, "transparent_hugepage/enabled=never", NULL);
		thps_set_global_oom(T, on);
		big = tproc();
		small = tproc();
		a = tmmap_aligned(big, MB(20));
		b = tmmap_aligned(small, MB(24));
		twrite(big, a, MB(20), PAGE, 1);
		err = touch(small, b, MB(24), PAGE);
		tcheck();
		if (!on) {
			ASSERT_EQ(err, -ENOMEM);
			ASSERT_EQ(thps_proc_oom_killed(big), 0);
		} else {
			ASSERT_EQ(err, 0);
			ASSERT_EQ(thps_proc_oom_killed(big), 1);
			ASSERT_EQ(fig(small, THPS_PROC_Anonymous), 24 * 1024);
			ASSERT_EQ(cg().events[THPS_MEMCG_oom_kill], 1);
			ASSERT_EQ(cg().events[THPS_MEMCG_oom], 0); /* not the cgroup's */
		}
		texit(big);
		texit(small);
	}
}

/* thps_shape_free: the free memory of a fragmented machine, block by block
 * as /proc/buddyinfo counts it.  A THP fault takes a free block of order 9
 * or more (no compaction for a fault under defrag=madvise), so 5 blocks of
 * order 9 and 2 of order 10 give 9 THPs, and the faults after them fall
 * back to 4 KiB pages from the small blocks; the global OOM killer acts
 * when every block is used. */
TEST(memcg_a_shaped_machine_gives_as_many_thps_as_its_large_blocks)
{
	uint64_t blocks[11] = { 300, 0, 0, 0, 0, 0, 0, 0, 0, 5, 2 };
	thps_proc *p;
	uint64_t a;
	int err;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	ASSERT_EQ(thps_shape_free(T, blocks, 11), 0);
	tcheck();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), 300 * 4 + 5 * 2048 + 2 * 4096);
	ASSERT_EQ(thps_shape_free(T, blocks, 11), -EBUSY);
	thps_set_global_oom(T, 1);
	p = tproc();
	a = tmmap_aligned(p, MB(64));
	err = touch(p, a, MB(64), KB(64));
	tcheck();
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 9);
	ASSERT(vm_delta(THPS_VM_thp_fault_fallback) > 0);
	ASSERT_EQ(err, -EINTR); /* the machine's OOM killer took it */
	texit(p);
	tmachine(16, NULL);
	blocks[10] = 100;
	ASSERT_EQ(thps_shape_free(T, blocks, 11), -ENOSPC);
}
