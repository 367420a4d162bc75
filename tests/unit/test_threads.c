/*
 * test_threads.c - several simulated processes on threads at once: read
 * faults on the huge zero page and on 4 KiB pages, writes, fork and exit,
 * while another thread drops caches (the shrinkers).  Run under
 * ThreadSanitizer by "make tsan".  Every lifetime: the huge zero page must
 * never be freed while mapped (the checker and the bytes read say so) and
 * never become writable; one process holds a mapping of it and reads it
 * all along.  tests/fuzz's "thpsim-soak --threads" adds the differential
 * view: every process's bytes compared with the reference model.
 */
#include <pthread.h>

#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ROUNDS 20
#define WORKERS 6

struct worker {
	int id, failed;
	char why[128];
};

static volatile int stop_shrinker;

static void *shrinker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_shrinker, __ATOMIC_RELAXED))
		thps_drop_caches(T);
	return NULL;
}

#define WFAIL(w, ...)                                                                      \
	do {                                                                               \
		snprintf((w)->why, sizeof((w)->why), __VA_ARGS__);                         \
		(w)->failed = 1;                                                           \
		return NULL;                                                               \
	} while (0)

static void *worker(void *arg)
{
	struct worker *w = arg;

	for (int r = 0; r < ROUNDS; r++) {
		thps_proc *p, *c;
		uint64_t a;
		struct thps_touch t = { .len = MB(4), .step = PAGE, .op = THPS_TOUCH_READ, .check = 1 };
		struct thps_pageinfo pi;
		uint8_t b;

		if (thps_proc_new(T, &p))
			WFAIL(w, "proc_new");
		if (thps_mmap(p, 0, MB(6), RW, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &a))
			WFAIL(w, "mmap");
		a = (a + HPAGE - 1) & ~(HPAGE - 1);
		if ((r + w->id) % 2 && thps_madvise(p, a, MB(4), THPS_MADV_HUGEPAGE))
			WFAIL(w, "madvise");
		t.addr = a;
		if (thps_touch(p, &t) || t.mismatches)
			WFAIL(w, "read pass");
		if (thps_pageinfo(p, a, &pi) || pi.writable)
			WFAIL(w, "zero page mapped writable");
		if (thps_fork(p, &c))
			WFAIL(w, "fork");
		t.op = THPS_TOUCH_WRITE;
		t.value = (uint8_t)(w->id + 1);
		t.len = MB(2);
		if (thps_touch(c, &t))
			WFAIL(w, "child write");
		t.op = THPS_TOUCH_READ;
		t.value = 0;
		t.len = MB(4);
		if (thps_touch(p, &t) || t.mismatches)
			WFAIL(w, "parent sees the child's write");
		if (thps_read(c, a + PAGE, &b, 1) || b != (uint8_t)(w->id + 1))
			WFAIL(w, "child lost its write");
		thps_exit(c);
		thps_exit(p);
	}
	return NULL;
}

TEST(threads_processes_fault_fork_exit_with_shrinker)
{
	static const char *const lifetimes[] = { "refcount", "per-mm", "persistent" };

	for (int l = 0; l < 3; l++) {
		pthread_t th[WORKERS], sh;
		struct worker w[WORKERS];

		tmachine(256, NULL);
		tknob("transparent_hugepage/enabled", "madvise");
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		stop_shrinker = 0;
		ASSERT_OK(pthread_create(&sh, NULL, shrinker, NULL));
		for (int i = 0; i < WORKERS; i++) {
			w[i] = (struct worker){ .id = i };
			ASSERT_OK(pthread_create(&th[i], NULL, worker, &w[i]));
		}
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
		__atomic_store_n(&stop_shrinker, 1, __ATOMIC_RELAXED);
		pthread_join(sh, NULL);
		for (int i = 0; i < WORKERS; i++)
			if (w[i].failed)
				test_fail(__FILE__, __LINE__, "%s lifetime, worker %d: %s", lifetimes[l], i,
					  w[i].why);
		tcheck();
		tdrop_caches();
		/* everything exited: every frame is free again (but a persistent
		 * huge zero page) */
		{
			uint64_t mi[THPS_NR_MEMINFO_ITEMS];

			thps_meminfo(T, mi);
			ASSERT_EQ(mi[THPS_MEM_MemFree] + (l == 2 ? 2048 : 0), mi[THPS_MEM_MemTotal]);
		}
	}
}

/*
 * One process holds a huge zero page mapping and keeps reading it while
 * the others fault, fork, write and exit on their own huge zero page
 * mappings and a thread runs the shrinkers without pause.  Whatever the
 * lifetime, the holder must read zeros from the same frame, mapped
 * read-only, for as long as it maps it: the huge zero page is never freed
 * while mapped (the series' patch 10: its shrinker frees it only when its
 * own reference is the last) and never mapped writable (patch 5).
 */
struct holder {
	thps_proc *p;
	uint64_t addr, pfn;
	int failed, reads;
	char why[128];
};

static volatile int stop_holder;

static void *holder(void *arg)
{
	struct holder *h = arg;
	static __thread uint8_t buf[PAGE];

	while (!__atomic_load_n(&stop_holder, __ATOMIC_RELAXED)) {
		struct thps_pageinfo pi;
		uint64_t off = (uint64_t)(h->reads % 512) * PAGE;

		if (thps_read(h->p, h->addr + off, buf, PAGE))
			WFAIL(h, "read");
		for (size_t i = 0; i < PAGE; i++)
			if (buf[i])
				WFAIL(h, "byte %zu of page %d is %#x", i, h->reads % 512, buf[i]);
		if (thps_pageinfo(h->p, h->addr + off, &pi))
			WFAIL(h, "pageinfo");
		if (!pi.huge_zero || pi.writable || pi.pfn != h->pfn + off / PAGE)
			WFAIL(h, "page %d: huge_zero %d writable %d pfn %#llx, was %#llx", h->reads % 512,
			      pi.huge_zero, pi.writable, (unsigned long long)pi.pfn,
			      (unsigned long long)(h->pfn + off / PAGE));
		h->reads++;
	}
	return NULL;
}

TEST(threads_huge_zero_page_never_freed_while_mapped)
{
	static const char *const lifetimes[] = { "refcount", "per-mm", "persistent" };

	for (int l = 0; l < 3; l++) {
		pthread_t th[WORKERS], sh, hth;
		struct worker w[WORKERS];
		struct holder h = { 0 };
		uint64_t mi[THPS_NR_MEMINFO_ITEMS];

		tmachine(256, NULL);
		tknob("transparent_hugepage/enabled", "madvise");
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		h.p = tproc();
		h.addr = tmmap_aligned(h.p, HPAGE);
		tmadvise(h.p, h.addr, HPAGE, THPS_MADV_HUGEPAGE);
		tread(h.p, h.addr, HPAGE, PAGE, 0);
		ASSERT(tpage(h.p, h.addr).huge_zero);
		h.pfn = tpage(h.p, h.addr).pfn;
		stop_shrinker = 0;
		stop_holder = 0;
		ASSERT_OK(pthread_create(&sh, NULL, shrinker, NULL));
		ASSERT_OK(pthread_create(&hth, NULL, holder, &h));
		for (int i = 0; i < WORKERS; i++) {
			w[i] = (struct worker){ .id = i };
			ASSERT_OK(pthread_create(&th[i], NULL, worker, &w[i]));
		}
		for (int i = 0; i < WORKERS; i++)
			pthread_join(th[i], NULL);
		__atomic_store_n(&stop_holder, 1, __ATOMIC_RELAXED);
		pthread_join(hth, NULL);
		__atomic_store_n(&stop_shrinker, 1, __ATOMIC_RELAXED);
		pthread_join(sh, NULL);
		for (int i = 0; i < WORKERS; i++)
			if (w[i].failed)
				test_fail(__FILE__, __LINE__, "%s lifetime, worker %d: %s", lifetimes[l], i,
					  w[i].why);
		if (h.failed)
			test_fail(__FILE__, __LINE__, "%s lifetime, the holder after %d reads: %s",
				  lifetimes[l], h.reads, h.why);
		ASSERT(h.reads > 0);
		tcheck();
		/* still mapped, still there after the shrinkers ran alone */
		tdrop_caches();
		ASSERT_EQ(tpage(h.p, h.addr).pfn, h.pfn);
		tread(h.p, h.addr, HPAGE, PAGE, 0);
		texit(h.p);
		tdrop_caches();
		thps_meminfo(T, mi);
		ASSERT_EQ(mi[THPS_MEM_MemFree] + (l == 2 ? 2048 : 0), mi[THPS_MEM_MemTotal]);
	}
}
