/*
 * test_threads.c - several simulated processes on threads at once: read
 * faults on the huge zero page and on 4 KiB pages, writes, fork and exit,
 * while another thread drops caches (the shrinkers).  Run under
 * ThreadSanitizer by "make tsan".  Every lifetime: the huge zero page must
 * never be freed while mapped (the checker and the bytes read say so) and
 * never become writable.
 */
#include <pthread.h>

#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ROUNDS 20

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
		pthread_t th[4], sh;
		struct worker w[4];

		tmachine(256, NULL);
		tknob("transparent_hugepage/enabled", "madvise");
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		stop_shrinker = 0;
		ASSERT_OK(pthread_create(&sh, NULL, shrinker, NULL));
		for (int i = 0; i < 4; i++) {
			w[i] = (struct worker){ .id = i };
			ASSERT_OK(pthread_create(&th[i], NULL, worker, &w[i]));
		}
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		__atomic_store_n(&stop_shrinker, 1, __ATOMIC_RELAXED);
		pthread_join(sh, NULL);
		for (int i = 0; i < 4; i++)
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
