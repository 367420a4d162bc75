/*
 * test_core.c - the parts everything stands on: errors that change nothing,
 * out-of-memory that leaks nothing, the buddy allocator under
 * fragmentation, VMA merging and splitting, mremap, brk, fork isolation
 * and the peak Rss.
 */
#include <stdlib.h>

#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ANON (THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS)

/* An access outside every VMA, or one the VMA forbids, is the program's
 * SIGSEGV: -EFAULT, no fault counted (do_user_addr_fault's bad_area path
 * never reaches handle_mm_fault), nothing changed. */
TEST(core_segv_changes_nothing)
{
	thps_proc *p;
	uint64_t a;
	uint8_t b = 1;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), THPS_PROT_READ, ANON);
	vm_mark();
	ASSERT_EQ(thps_write(p, a, &b, 1), -EFAULT);
	ASSERT_EQ(thps_read(p, a + MB(1), &b, 1), -EFAULT);
	ASSERT_EQ(thps_read(p, 0, &b, 1), -EFAULT);
	ASSERT_EQ(thps_read(p, ~0ULL - 10, &b, 1), -EFAULT);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
	ASSERT(!tpage(p, a).present);
	tcheck();
	/* a read is fine, a write after it still not */
	tread(p, a, 1, 1, 0);
	ASSERT_EQ(thps_write(p, a, &b, 1), -EFAULT);
	ASSERT(tpage(p, a).zero_page);
	texit(p);
}

/* Bad arguments give -EINVAL (or the errno Linux gives) and change nothing. */
TEST(core_bad_arguments_change_nothing)
{
	thps_proc *p;
	uint64_t a, out;
	int n;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(4), RW, ANON);
	twrite(p, a, MB(4), PAGE, 7);
	n = tvmas(p);
	vm_mark();
	ASSERT_EQ(thps_mmap(p, 0, 0, RW, ANON, &out), -EINVAL);
	ASSERT_EQ(thps_mmap(p, 0, PAGE, RW, THPS_MAP_SHARED | THPS_MAP_ANONYMOUS, &out), -EOPNOTSUPP);
	ASSERT_EQ(thps_mmap(p, 0, PAGE, RW, THPS_MAP_PRIVATE, &out), -EOPNOTSUPP);
	ASSERT_EQ(thps_mmap(p, a + 1, PAGE, RW, ANON | THPS_MAP_FIXED, &out), -EINVAL);
	ASSERT_EQ(thps_mmap(p, a, PAGE, RW, ANON | THPS_MAP_FIXED_NOREPLACE, &out), -EEXIST);
	ASSERT_EQ(thps_munmap(p, a + 1, PAGE), -EINVAL);
	ASSERT_EQ(thps_munmap(p, a, 0), -EINVAL);
	ASSERT_EQ(thps_mprotect(p, a + 1, PAGE, THPS_PROT_READ), -EINVAL);
	ASSERT_EQ(thps_mprotect(p, a, PAGE, 0x80), -EINVAL);
	/* a range with a hole: nothing changes (Linux changes the part before it) */
	ASSERT_EQ(thps_mprotect(p, a, MB(8), THPS_PROT_READ), -ENOMEM);
	ASSERT_EQ(thps_madvise(p, a, MB(8), THPS_MADV_DONTNEED), -ENOMEM);
	ASSERT_EQ(thps_madvise(p, a, PAGE, 12345), -EINVAL);
	ASSERT_EQ(thps_madvise(p, a + 1, PAGE, THPS_MADV_DONTNEED), -EINVAL);
	ASSERT_EQ(thps_mremap(p, a, PAGE, 0, 0, 0, &out), -EINVAL);
	ASSERT_EQ(thps_mremap(p, a, PAGE, PAGE, THPS_MREMAP_FIXED, a + MB(8), &out), -EINVAL);
	ASSERT_EQ(thps_mremap(p, a + MB(8), PAGE, PAGE, 0, 0, &out), -EFAULT);
	ASSERT_EQ(thps_knob_set(T, "transparent_hugepage/enabled", "sometimes"), -EINVAL);
	ASSERT_EQ(thps_knob_set(T, "transparent_hugepage/khugepaged/max_ptes_none", "512"), -EINVAL);
	ASSERT_EQ(thps_knob_set(T, "no/such/knob", "1"), -ENOENT);
	tcheck();
	ASSERT_EQ(tvmas(p), n);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4096);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
	tread(p, a, MB(4), PAGE, 7);
	twrite(p, a, MB(4), PAGE, 8); /* still writable: mprotect changed nothing */
	texit(p);
}

/* Run "scenario" with the nth allocation of class cls failing; every
 * failure must leave a consistent state, and once every process has exited
 * and the shrinkers have run, every frame must be free again. */
typedef void (*scenario_fn)(void);

static uint64_t allocs_of(scenario_fn fn, enum thps_alloc_class cls)
{
	uint64_t n;

	tmachine(64, NULL);
	thps_fail_alloc(T, cls, 0, 0);
	fn();
	n = thps_alloc_count(T, cls);
	return n;
}

static void inject_every(scenario_fn fn, const char *name)
{
	for (int cls = 0; cls < 2; cls++) {
		uint64_t n = allocs_of(fn, (enum thps_alloc_class)cls);

		ASSERT(n > 0);
		for (uint64_t i = 1; i <= n; i++) {
			tmachine(64, NULL);
			thps_fail_alloc(T, (enum thps_alloc_class)cls, i, 0);
			fn();
			thps_fail_alloc(T, (enum thps_alloc_class)cls, 0, 0);
			tdrop_caches();
			if (tmeminfo(THPS_MEM_MemFree) != tmeminfo(THPS_MEM_MemTotal))
				test_fail(__FILE__, __LINE__, "%s: failing %s allocation %llu of %llu leaks %llu kB",
					  name, cls ? "page-table" : "data-page", (unsigned long long)i,
					  (unsigned long long)n, (unsigned long long)(tmeminfo(THPS_MEM_MemTotal) - tmeminfo(THPS_MEM_MemFree)));
		}
	}
}

/* Scenarios run under injection: each step may fail; failures must be clean
 * errors, and what follows must still work on a consistent state. */
static void run_step_at(int err, int line)
{
	if (err && err != -ENOMEM)
		test_fail(__FILE__, line, "a step failed with %d, not -ENOMEM", err);
	tcheck_at(__FILE__, line);
}
#define run_step(e) run_step_at((e), __LINE__)

static void scen_hzp_fork_write(void)
{
	thps_proc *p, *c = NULL;
	uint64_t a;
	struct thps_touch t = { .len = MB(4), .step = PAGE, .op = THPS_TOUCH_READ };

	if (thps_proc_new(T, &p))
		return;
	run_step(thps_mmap(p, 0, MB(4), RW, ANON, &a));
	if (!a) {
		thps_exit(p);
		return;
	}
	run_step(thps_madvise(p, a, MB(4), THPS_MADV_HUGEPAGE));
	t.addr = a;
	run_step(thps_touch(p, &t));
	run_step(thps_fork(p, &c));
	t.op = THPS_TOUCH_WRITE;
	t.value = 3;
	run_step(thps_touch(p, &t));
	if (c) {
		t.len = MB(1);
		run_step(thps_touch(c, &t));
		thps_exit(c);
	}
	run_step(thps_munmap(p, a + PAGE, PAGE));
	thps_exit(p);
	tcheck();
}

static void scen_split_mremap(void)
{
	thps_proc *p;
	uint64_t a, b = 0;
	struct thps_touch t = { .len = MB(4), .step = PAGE, .op = THPS_TOUCH_WRITE, .value = 1 };

	if (thps_proc_new(T, &p))
		return;
	run_step(thps_mmap(p, 0, MB(4), RW, ANON, &a));
	if (!a) {
		thps_exit(p);
		return;
	}
	run_step(thps_madvise(p, a, MB(4), THPS_MADV_HUGEPAGE));
	t.addr = a;
	run_step(thps_touch(p, &t));
	run_step(thps_mprotect(p, a + PAGE, PAGE, THPS_PROT_READ));
	run_step(thps_mremap(p, a + MB(2), MB(2), MB(4), THPS_MREMAP_MAYMOVE, 0, &b));
	run_step(thps_madvise(p, b ? b : a, MB(1), THPS_MADV_DONTNEED));
	thps_exit(p);
	tcheck();
}

static void scen_4k_cow(void)
{
	thps_proc *p, *c = NULL;
	uint64_t a;
	struct thps_touch t = { .len = MB(1), .step = PAGE, .op = THPS_TOUCH_WRITE, .value = 1 };

	if (thps_proc_new(T, &p))
		return;
	run_step(thps_mmap(p, 0, MB(1), RW, ANON, &a));
	if (!a) {
		thps_exit(p);
		return;
	}
	t.addr = a;
	run_step(thps_touch(p, &t));
	run_step(thps_fork(p, &c));
	t.value = 2;
	run_step(thps_touch(p, &t));
	if (c)
		thps_exit(c);
	thps_exit(p);
	tcheck();
}

TEST(core_enomem_at_every_allocation_leaks_nothing)
{
	inject_every(scen_hzp_fork_write, "huge zero page, fork, write");
	inject_every(scen_split_mremap, "THP, split, mremap");
	inject_every(scen_4k_cow, "4 KiB pages, fork, COW");
}

/* A THP needs 512 contiguous free frames: with memory fragmented by 4 KiB
 * pages, the fault falls back (thp_fault_fallback) to 4 KiB pages. */
TEST(core_fragmented_memory_falls_back_to_4k)
{
	thps_proc *p, *q;
	uint64_t a, b;
	struct thps_touch t = { .step = PAGE, .op = THPS_TOUCH_WRITE, .value = 1 };

	tmachine(32, NULL);
	p = tproc();
	/* fill memory with 4 KiB pages */
	a = tmmap(p, 0, MB(64), RW, ANON);
	t.addr = a;
	t.len = MB(64);
	ASSERT_EQ(thps_touch(p, &t), -ENOMEM);
	tcheck();
	/* free every other page: half the memory free, no 2 MiB block */
	for (uint64_t off = 0; off < t.done; off += 2 * PAGE)
		ASSERT_OK(thps_madvise(p, a + off, PAGE, THPS_MADV_DONTNEED));
	tcheck();
	ASSERT_LE(MB(10) >> 10, tmeminfo(THPS_MEM_MemFree));
	q = tproc();
	b = tmmap_aligned(q, MB(2));
	tmadvise(q, b, MB(2), THPS_MADV_HUGEPAGE);
	vm_mark();
	twrite(q, b, 1, 1, 9);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
	ASSERT_EQ(fig(q, THPS_PROC_Rss), 4);
	/* free it all: the pages merge back into blocks and a THP fits */
	texit(p);
	twrite(q, b + MB(1), 1, 1, 9);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0); /* the PMD holds a table now */
	tmunmap(q, b, MB(2));
	b = tmmap_aligned(q, MB(2));
	tmadvise(q, b, MB(2), THPS_MADV_HUGEPAGE);
	twrite(q, b, 1, 1, 9);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);
	texit(q);
	tdrop_caches();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), tmeminfo(THPS_MEM_MemTotal));
}

/*
 * Frames a process leaves behind when it exits are free memory: whatever its
 * frame cache held goes back where it merges into 2 MiB blocks, so a later
 * process can have a THP in every block not holding the zero page (frame 0),
 * even without reclaim (defrag=never).  A process that wrote 20 MiB of
 * 4 KiB pages has a cache of frames from all over memory at exit; parking
 * it for the next process (page_alloc.c) must not keep blocks apart.
 */
TEST(core_exit_leaves_no_fragments)
{
	thps_proc *p, *q;
	uint64_t a, b;

	tmachine(32, "transparent_hugepage/enabled=always", "transparent_hugepage/defrag=never",
		 NULL);
	p = tproc();
	a = tmmap(p, 0, MB(20), RW, ANON);
	tmadvise(p, a, MB(20), THPS_MADV_NOHUGEPAGE);
	twrite(p, a, MB(20), PAGE, 1);
	texit(p);
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), tmeminfo(THPS_MEM_MemTotal));
	q = tproc();
	b = tmmap_aligned(q, MB(30));
	vm_mark();
	twrite(q, b, MB(30), HPAGE, 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 15);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), 0);
	texit(q);
}

/* Adjacent anonymous mappings merge, and so a 2 MiB window across them
 * becomes THP-eligible; mprotect splits and re-merges. */
TEST(core_vma_merge_and_split)
{
	thps_proc *p;
	uint64_t a, b;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(1));
	b = tmmap(p, a + MB(1), MB(1), RW, ANON | THPS_MAP_FIXED_NOREPLACE);
	ASSERT_EQ(b, a + MB(1));
	ASSERT_EQ(tvmas(p), 1);
	tread(p, a, 1, 1, 0);
	ASSERT(tpage(p, a).huge_zero);
	tmprotect(p, a + MB(1), PAGE, THPS_PROT_READ);
	ASSERT_EQ(tvmas(p), 3);
	ASSERT(!tpage(p, a).huge);
	tmprotect(p, a + MB(1), PAGE, RW);
	ASSERT_EQ(tvmas(p), 1);
	/* MADV_HUGEPAGE on part of it: three VMAs; back to NOHUGEPAGE+none: not
	 * mergeable (the flags differ) */
	tmadvise(p, a, MB(1), THPS_MADV_NOHUGEPAGE);
	ASSERT_EQ(tvmas(p), 2);
	texit(p);
}

/* mremap: shrink, grow in place, grow by moving; the bytes move along. */
TEST(core_mremap_keeps_bytes)
{
	thps_proc *p;
	uint64_t a, b, c, blocker;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	twrite(p, a, MB(1), PAGE, 0x5a);
	ASSERT_OK(thps_mremap(p, a, MB(1), MB(1) / 2, 0, 0, &b));
	ASSERT_EQ(b, a);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 512);
	/* the space above is free: grows in place */
	ASSERT_OK(thps_mremap(p, a, MB(1) / 2, MB(1), 0, 0, &b));
	ASSERT_EQ(b, a);
	tread(p, a + MB(1) / 2, MB(1) / 2, PAGE, 0);
	/* block the space above: it has to move */
	blocker = tmmap(p, a + MB(1), PAGE, RW, ANON | THPS_MAP_FIXED_NOREPLACE);
	ASSERT_EQ(thps_mremap(p, a, MB(1), MB(2), 0, 0, &c), -ENOMEM);
	ASSERT_OK(thps_mremap(p, a, MB(1), MB(2), THPS_MREMAP_MAYMOVE, 0, &c));
	tcheck();
	ASSERT_NE(c, a);
	tread(p, c, MB(1) / 2, PAGE, 0x5a);
	tread(p, c + MB(1) / 2, MB(3) / 2, PAGE, 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 512);
	ASSERT_EQ(thps_read(p, a, &b, 1), -EFAULT);
	(void)blocker;
	texit(p);
}

TEST(core_brk)
{
	thps_proc *p;
	uint64_t start, cur;

	tmachine(64, NULL);
	p = tproc();
	ASSERT_OK(thps_brk(p, 0, &start));
	ASSERT_OK(thps_brk(p, start + MB(1), &cur));
	ASSERT_EQ(cur, start + MB(1));
	twrite(p, start, MB(1), PAGE, 1);
	ASSERT_OK(thps_brk(p, start + MB(1) / 2, &cur));
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 512);
	ASSERT_OK(thps_brk(p, start - PAGE, &cur)); /* below the start: refused */
	ASSERT_EQ(cur, start + MB(1) / 2);
	texit(p);
}

/* fork: 4 KiB pages are shared until written; each side sees its own
 * writes only; Pss halves while shared. */
TEST(core_fork_isolation_4k)
{
	thps_proc *p, *c;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	twrite(p, a, MB(1), PAGE, 1);
	c = tfork(p);
	ASSERT_EQ(fig(c, THPS_PROC_Rss), 1024);
	ASSERT_EQ(fig(c, THPS_PROC_Pss), 512);
	ASSERT_EQ(fig(p, THPS_PROC_Shared_Dirty), 1024);
	vm_mark();
	twrite(c, a, MB(1) / 2, PAGE, 2);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 128);
	tread(p, a, MB(1), PAGE, 1);
	tread(c, a, MB(1) / 2, PAGE, 2);
	tread(c, a + MB(1) / 2, MB(1) / 2, PAGE, 1);
	texit(c);
	/* the parent owns its pages alone again: writes reuse them */
	vm_mark();
	twrite(p, a, MB(1), PAGE, 3);
	ASSERT_EQ(vm_delta(THPS_VM_nr_anon_pages), 0);
	texit(p);
	tdrop_caches();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), tmeminfo(THPS_MEM_MemTotal));
}

/* A failed fork leaves the parent as it was and no child behind. */
TEST(core_fork_failure_cleans_up)
{
	thps_proc *p, *c = NULL;
	uint64_t a, before;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(8), RW, ANON);
	twrite(p, a, MB(8), PAGE, 1);
	before = tmeminfo(THPS_MEM_MemFree);
	for (int n = 1; n <= 6; n++) {
		thps_fail_alloc(T, THPS_ALLOC_PGTABLE, (uint64_t)n, 0);
		ASSERT_EQ(thps_fork(p, &c), -ENOMEM);
		ASSERT(c == NULL);
		thps_fail_alloc(T, THPS_ALLOC_PGTABLE, 0, 0);
		tcheck();
		ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), before);
	}
	twrite(p, a, MB(8), PAGE, 2);
	texit(p);
}

/* VmHWM keeps the peak across munmap and MADV_DONTNEED. */
TEST(core_vmhwm)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(4), RW, ANON);
	twrite(p, a, MB(4), PAGE, 1);
	tmadvise(p, a, MB(2), THPS_MADV_DONTNEED);
	ASSERT_EQ(fig(p, THPS_PROC_VmRSS), 2048);
	ASSERT_EQ(fig(p, THPS_PROC_VmHWM), 4096);
	tmunmap(p, a, MB(4));
	ASSERT_EQ(fig(p, THPS_PROC_VmHWM), 4096);
	texit(p);
}

/* Many random mmaps and munmaps: the VMA tree stays ordered and balanced
 * (the checker walks it), and lookups find every byte. */
TEST(core_vma_tree_random)
{
	thps_proc *p;
	uint64_t base;
	unsigned seed = 12345;
	static uint8_t mapped[1024];

	tmachine(64, NULL);
	p = tproc();
	base = tmmap(p, 0, 1024 * PAGE, RW, ANON);
	tmunmap(p, base, 1024 * PAGE);
	memset(mapped, 0, sizeof(mapped));
	for (int i = 0; i < 3000; i++) {
		uint64_t idx = (uint64_t)(rand_r(&seed) % 1000), len = 1 + (uint64_t)(rand_r(&seed) % 24);
		uint64_t out;

		if (rand_r(&seed) % 2) {
			if (thps_mmap(p, base + idx * PAGE, len * PAGE,
				      (rand_r(&seed) % 2) ? RW : THPS_PROT_READ,
				      ANON | THPS_MAP_FIXED, &out) == 0)
				memset(mapped + idx, 1, len);
		} else {
			ASSERT_OK(thps_munmap(p, base + idx * PAGE, len * PAGE));
			memset(mapped + idx, 0, len);
		}
		if (i % 100 == 0)
			tcheck();
	}
	tcheck();
	for (uint64_t i = 0; i < 1024; i++) {
		uint8_t b;

		ASSERT_EQ(thps_read(p, base + i * PAGE, &b, 1) == 0, mapped[i]);
	}
	texit(p);
}

/* THPS_TOUCH_DIRTY (replay's writes): the page counts as written, so a split
 * keeps it rather than mapping it to the zero page, and a copy-on-write
 * copy holds data too; the bytes themselves were never stored. */
TEST(core_touch_dirty_is_a_write_without_bytes)
{
	thps_proc *p, *c;
	uint64_t a;
	struct thps_touch t = { .len = 1, .step = 1, .op = THPS_TOUCH_DIRTY };

	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	tmadvise(p, a, MB(2), THPS_MADV_HUGEPAGE);
	t.addr = a + PAGE;
	ASSERT_OK(thps_touch(p, &t));
	tcheck();
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	tread(p, a + PAGE, 1, 1, 0);
	c = tfork(p);
	twrite(c, a + 2 * PAGE, 1, 1, 5); /* splits the child's PMD, copies one page */
	tmunmap(p, a + MB(1), MB(1));     /* partially mapped: queued */
	texit(c);
	tdrop_caches();
	/* the dirty page stays a page of data; the others became the zero page */
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
	ASSERT(!tpage(p, a + PAGE).zero_page);
	ASSERT(tpage(p, a).zero_page);
	texit(p);
}
