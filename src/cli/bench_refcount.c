/*
 * bench_refcount.c - the reference-count experiment of "thpsim bench".
 *
 * The series "Introduce huge zero page" (Linux 3.8) counted the huge zero
 * page's references with one global atomic counter, got and put once per
 * mapping, and measured that this slowed a parallel read-faulting benchmark
 * (40 processes on a 4-socket machine) by about 1% against a page that is
 * never freed.  Linux 4.9 replaced it with one reference per address space
 * after a 72-process read-only usemem run showed the shared counter taking
 * most of the cycles.  The model has all three lifetimes behind the knob
 * thpsim/huge_zero_page_lifetime; this file runs the same workload under
 * each one.
 *
 * The workload: T host threads share one simulated machine with THP
 * enabled=always.  Each thread keeps P live simulated processes and cycles
 * through them: the oldest exits and a new one starts, maps its own region
 * and reads one byte every 2 MiB of it (usemem -j 2M), so every access is a
 * huge zero page read fault; a smaller step adds accesses that hit the
 * mapping, which dilutes whatever the faults cost.  Under "refcount" every fault gets the global counter and
 * every zap puts it; under "per-mm" each process gets it once; under
 * "persistent" nobody touches it after the first fault.  The processes are
 * otherwise independent: each has its own lock, page tables and frame cache.
 *
 * The rate is the model's own pgfault count over the wall time of the run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"

const char *const bench_lifetimes[BENCH_NR_LIFETIMES] = { "refcount", "per-mm", "persistent" };

/* Workers wait here until every thread exists, then start together. */
struct start_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open;
};

static void gate_wait(struct start_gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct start_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

struct worker {
	pthread_t tid;
	thps_machine *m;
	const struct refcount_params *prm;
	struct start_gate *gate;
	const int *stop;
	uint64_t lifetimes; /* processes started */
	double cpu_s;       /* CPU time the thread got while running */
	int err;
	char why[96];
} __attribute__((aligned(64))); /* one cache line or more per worker */

/* A new process that maps its region and read-faults it, 2 MiB apart. */
static int start_process(struct worker *w, thps_proc **out)
{
	struct thps_touch t = { .len = w->prm->region, .step = w->prm->step,
				.op = THPS_TOUCH_READ };
	thps_proc *p;
	int err;

	*out = NULL;
	if ((err = thps_proc_new(w->m, &p))) {
		snprintf(w->why, sizeof(w->why), "new process");
		return err;
	}
	err = thps_mmap(p, 0, w->prm->region, THPS_PROT_READ | THPS_PROT_WRITE,
			THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &t.addr);
	if (err) {
		snprintf(w->why, sizeof(w->why), "mmap");
		thps_exit(p);
		return err;
	}
	if ((err = thps_touch(p, &t))) {
		snprintf(w->why, sizeof(w->why), "read pass");
		thps_exit(p);
		return err;
	}
	w->lifetimes++;
	*out = p;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const int n = w->prm->procs;
	thps_proc **live = calloc((size_t)n, sizeof(*live));

	double cpu0;

	gate_wait(w->gate);
	cpu0 = bench_thread_cpu();
	if (!live) {
		w->err = -ENOMEM;
		snprintf(w->why, sizeof(w->why), "host memory");
		return NULL;
	}
	for (int i = 0; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); i = (i + 1) % n) {
		thps_exit(live[i]);
		if ((w->err = start_process(w, &live[i])))
			break;
	}
	for (int i = 0; i < n; i++)
		thps_exit(live[i]);
	free(live);
	w->cpu_s = bench_thread_cpu() - cpu0;
	return NULL;
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Simulated RAM for the run: every live process's page tables (one PTE
 * table deposited per huge zero PMD, a few above), twice over, and the huge
 * zero page; at least 4 GiB.  The host commits only what is used. */
uint64_t bench_refcount_ram(const struct refcount_params *prm)
{
	uint64_t tables = prm->region / THPS_HPAGE_PMD_SIZE + 8;
	uint64_t bytes = (uint64_t)prm->threads * (uint64_t)prm->procs * tables * THPS_PAGE_SIZE * 2 +
			 (64ULL << 20);

	return bytes < (4ULL << 30) ? 4ULL << 30 : (bytes + (4ULL << 20) - 1) & ~((4ULL << 20) - 1);
}

int bench_refcount_run(const char *lifetime, const struct refcount_params *prm,
		       struct refcount_result *res)
{
	const int nt = prm->threads;
	struct worker *w;
	struct start_gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };
	thps_machine *m;
	uint64_t vm[THPS_NR_VM_ITEMS], expect_per_proc = prm->region / THPS_HPAGE_PMD_SIZE;
	int stop = 0, started = 0, err;
	double t0, t1;

	memset(res, 0, sizeof(*res));
	if ((err = thps_machine_new(&(struct thps_config){ .ram_bytes = bench_refcount_ram(prm) }, &m)))
		return msg_error(err, "bench: cannot create a simulated machine of %llu GiB "
				 "for %d threads of %d processes",
				 (unsigned long long)(bench_refcount_ram(prm) >> 30), nt, prm->procs);
	if ((err = thps_knob_set(m, "transparent_hugepage/enabled", "always")) ||
	    (err = thps_knob_set(m, "thpsim/huge_zero_page_lifetime", lifetime))) {
		msg_error(0, "bench: %s", thps_last_error(m));
		thps_machine_free(m);
		return err;
	}
	w = aligned_alloc(64, sizeof(*w) * (size_t)nt);
	if (!w) {
		thps_machine_free(m);
		return msg_error(-ENOMEM, "bench: %d threads", nt);
	}
	memset(w, 0, sizeof(*w) * (size_t)nt);
	for (int i = 0; i < nt; i++) {
		w[i].m = m;
		w[i].prm = prm;
		w[i].gate = &gate;
		w[i].stop = &stop;
		if ((err = pthread_create(&w[i].tid, NULL, worker_main, &w[i]))) {
			msg_error(-err, "bench: cannot start thread %d", i + 1);
			break;
		}
		started++;
	}
	if (started < nt) /* let the started ones through; they stop at once */
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	t0 = bench_now();
	gate_open(&gate);
	if (started == nt)
		sleep_s(prm->seconds);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	t1 = bench_now();
	if (started < nt) {
		free(w);
		thps_machine_free(m);
		return -EAGAIN;
	}
	for (int i = 0; i < nt; i++) {
		res->processes += w[i].lifetimes;
		res->cpu_share += w[i].cpu_s / (t1 - t0) / nt;
		if (w[i].err && !err)
			err = msg_error(w[i].err, "bench: %s, thread %d: %s", lifetime, i + 1,
					w[i].why);
	}
	thps_vmstat(m, vm);
	res->faults = vm[THPS_VM_pgfault];
	res->seconds = t1 - t0;
	res->faults_per_s = (double)res->faults / res->seconds;
	/* every access must have been a huge zero page fault, or the figure
	 * measures something else */
	if (!err && (res->faults != res->processes * expect_per_proc ||
		     vm[THPS_VM_thp_fault_fallback] || !vm[THPS_VM_thp_zero_page_alloc]))
		err = msg_error(-EPROTO,
				"bench: %s: %llu faults for %llu processes, %llu fallbacks: "
				"not every fault mapped the huge zero page",
				lifetime, (unsigned long long)res->faults,
				(unsigned long long)res->processes,
				(unsigned long long)vm[THPS_VM_thp_fault_fallback]);
	free(w);
	thps_machine_free(m);
	return err;
}
