/*
 * ranges.c - one trace under several address layouts, and the spread of
 * its figures (replay.h, replay_run_layouts).
 *
 * Layout 0 is the recorded one and makes the report; the others (drawn by
 * layout.c) run next, on threads, each on its own simulated machine, and
 * only their figures are kept: the machine's and, process by process,
 * each address space's (the trace makes the same processes in the same
 * order under every layout, so the k-th address space of one layout is
 * the k-th of another).
 *
 * Whether the layout can matter is decided from layout 0's run: where no
 * page can be in a THP or an mTHP (every size's enabled is never, or
 * madvise and the program never asked with MADV_HUGEPAGE; no
 * MADV_COLLAPSE, which ignores enabled; or every process THP-disabled),
 * every layout gives the same figures, and only layout 0 runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "measure.h"

#define NAME(name, label, expr) #name,
static const char *const machine_names[] = { RANGE_MACHINE_FIGURES(NAME) };
static const char *const mm_names[] = { RANGE_MM_FIGURES(NAME) };
#undef NAME

const char *replay_range_machine_name(int f)
{
	return f >= 0 && f < RANGE_NR_MACHINE ? machine_names[f] : NULL;
}

const char *replay_range_mm_name(int f)
{
	return f >= 0 && f < RANGE_NR_MM ? mm_names[f] : NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void replay_spread(const uint64_t *v, int n, uint64_t out[3])
{
	uint64_t small[64], *s = n <= 64 ? small : malloc((size_t)n * sizeof(*s));

	if (n <= 0 || !s) {
		out[0] = out[1] = out[2] = n > 0 ? v[0] : 0;
		return;
	}
	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	out[0] = s[0];
	out[1] = s[(n - 1) / 2];
	out[2] = s[n - 1];
	if (s != small)
		free(s);
}

/* Layout k's figures into the ranges. */
static void take(struct replay_ranges *g, int k, const struct replay_result *r)
{
#define MACHINE(name, label, expr) g->machine[(size_t)RANGE_##name * g->n + k] = (expr);
	RANGE_MACHINE_FIGURES(MACHINE)
#undef MACHINE
	for (int i = 0; i < g->nmms; i++) {
		const struct replay_mm *mm = i < r->nmms ? r->mms[i] : NULL;
		uint64_t *v = g->mm + (size_t)i * RANGE_NR_MM * g->n;

		if (!mm) {
			g->nmms = 0; /* another layout made other processes */
			return;
		}
#define MM(name, label, expr) v[(size_t)RANGE_MM_##name * g->n + k] = (expr);
		RANGE_MM_FIGURES(MM)
#undef MM
	}
}

/* Why the figures cannot depend on the layout ("" when they can). */
static void layout_fixed(const struct replay_opts *o, const struct replay_result *res, char *why,
			 size_t len)
{
	const char *pmd = "never";
	int always = 0, madvise = 0;

	*why = 0;
	if (o->thp_disabled) {
		snprintf(why, len, "every process ran THP-disabled (--as-recorded)");
		return;
	}
	if (res->madv_collapse_calls)
		return;
	for (int i = 0; i < res->nknobs; i++)
		if (!strcmp(res->knob_name[i], "transparent_hugepage/enabled"))
			pmd = res->knob_value[i];
	for (int i = 0; i < res->nknobs; i++) {
		const char *n = res->knob_name[i], *v = res->knob_value[i];
		size_t l = strlen(n);

		if (strcmp(n, "transparent_hugepage/enabled") &&
		    (strncmp(n, "transparent_hugepage/hugepages-", 31) || l < 8 ||
		     strcmp(n + l - 8, "/enabled")))
			continue;
		if (!strcmp(v, "inherit"))
			v = pmd;
		always |= !strcmp(v, "always");
		madvise |= !strcmp(v, "madvise");
	}
	if (always)
		return;
	if (!madvise)
		snprintf(why, len, "every THP size is never: no page can be in a THP");
	else if (!res->madv_hugepage_calls)
		snprintf(why, len, "THP only on MADV_HUGEPAGE, which the program never asked for");
}

struct job {
	const char *path;
	const struct replay_opts *o;
	struct replay_ranges *g;
	pthread_mutex_t lock;
	int next, failed;
	char err[512];
};

static void *worker(void *arg)
{
	struct job *j = arg;

	for (;;) {
		struct replay_result r;
		struct replay_opts o = *j->o;
		char err[512];
		int k;

		pthread_mutex_lock(&j->lock);
		k = j->failed ? j->g->n : j->next++;
		pthread_mutex_unlock(&j->lock);
		if (k >= j->g->n)
			return NULL;
		o.layout = k;
		o.progress = 0;
		if (replay_run(j->path, &o, &r, err, sizeof(err))) {
			pthread_mutex_lock(&j->lock);
			if (!j->failed++)
				snprintf(j->err, sizeof(j->err), "layout %d: %s", k, err);
			pthread_mutex_unlock(&j->lock);
		} else {
			pthread_mutex_lock(&j->lock);
			take(j->g, k, &r);
			pthread_mutex_unlock(&j->lock);
		}
		replay_result_free(&r);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int replay_run_layouts(const char *path, const struct replay_opts *o, int nlayouts, int threads,
		       struct replay_result *res, char *err, size_t errlen)
{
	struct replay_opts o0 = *o;
	struct replay_ranges *g;
	double t0 = now_s();
	int e;

	o0.layout = 0;
	e = replay_run(path, &o0, res, err, errlen);
	if (e)
		return e;
	g = calloc(1, sizeof(*g));
	if (!g)
		return 0; /* the report stands without its ranges */
	g->asked = nlayouts < 1 ? 1 : nlayouts;
	g->seed = o->layout_seed;
	layout_fixed(o, res, g->fixed, sizeof(g->fixed));
	g->n = g->fixed[0] ? 1 : g->asked;
	g->nmms = res->nmms;
	g->machine = calloc((size_t)RANGE_NR_MACHINE * g->n, sizeof(uint64_t));
	g->mm = calloc((size_t)(g->nmms ? g->nmms : 1) * RANGE_NR_MM * g->n, sizeof(uint64_t));
	if (!g->machine || !g->mm) {
		free(g->machine);
		free(g->mm);
		free(g);
		return 0;
	}
	res->ranges = g;
	take(g, 0, res);
	if (g->n > 1) {
		struct job j = { .path = path, .o = o, .g = g, .lock = PTHREAD_MUTEX_INITIALIZER,
				 .next = 1 };
		pthread_t th[64];
		int nth = threads < 1 ? 1 : threads > 64 ? 64 : threads, started = 0;

		if (nth > g->n - 1)
			nth = g->n - 1;
		for (int t = 1; t < nth; t++)
			started += !pthread_create(&th[started], NULL, worker, &j);
		worker(&j);
		for (int t = 0; t < started; t++)
			pthread_join(th[t], NULL);
		if (j.failed) {
			snprintf(err, errlen, "%s", j.err);
			replay_result_free(res);
			return -EIO;
		}
	}
	g->seconds = now_s() - t0;
	return 0;
}

void replay_ranges_free(struct replay_ranges *g)
{
	if (g) {
		free(g->machine);
		free(g->mm);
		free(g);
	}
}
