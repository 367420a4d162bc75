/*
 * measure_series.c - Rss and AnonHugePages over time: a series per
 * address space, and one for the machine (the sum over the live address
 * spaces, with meminfo's AnonPages and AnonHugePages), with the peaks
 * they show.
 *
 * The engine samples every "stride" records; at REPLAY_SERIES_MAX points
 * this measure keeps every other one and doubles the stride, so a trace
 * of any length keeps at most that many points on the schedule.  Points
 * outside it (idx UINT64_MAX: a --sample-ms point, an address space's
 * start and end) are never thinned.
 */
#include <stdlib.h>

#include "measure.h"

static void series_add_machine(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss,
			       uint64_t huge, uint64_t anon_pages, uint64_t mem_huge)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 16;
		struct replay_point *p = realloc(s->p, (size_t)cap * sizeof(*p));

		if (!p)
			return;
		s->p = p;
		s->cap = cap;
	}
	s->p[s->n++] = (struct replay_point){ t, idx, rss, huge, anon_pages, mem_huge };
}

void series_add(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss, uint64_t huge)
{
	series_add_machine(s, t, idx, rss, huge, 0, 0);
}

/* Keep the points whose sample number is a multiple of every (and the
 * ones taken outside the schedule, idx == UINT64_MAX: starts and ends). */
static void series_thin(struct replay_series *s, uint64_t every)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		if (s->p[i].idx == UINT64_MAX || s->p[i].idx % every == 0)
			s->p[k++] = s->p[i];
	s->n = k;
}

static void overall_add(struct replay *r, uint64_t idx, uint64_t sum_rss, uint64_t sum_huge,
			uint64_t anon, uint64_t mhuge)
{
	struct replay_result *res = r->res;

	series_add_machine(&res->overall, r->now_ns, idx, sum_rss, sum_huge, anon, mhuge);
	if (sum_rss > res->overall_peak_rss_kb)
		res->overall_peak_rss_kb = sum_rss;
	if (sum_huge > res->overall_peak_anon_huge_kb)
		res->overall_peak_anon_huge_kb = sum_huge;
}

/* A point of every live series now, numbered idx, and the peaks; on the
 * schedule, the series thinned when full. */
static void series_tick(struct replay *r, uint64_t idx)
{
	struct replay_result *res = r->res;
	uint64_t sum_rss = 0, sum_huge = 0, anon, mhuge;

	figures_machine_now(r, &anon, &mhuge);
	for (int i = 0; i < res->nmms; i++) {
		struct replay_mm *mm = res->mms[i];
		uint64_t rss, huge;

		if (mm->ended)
			continue;
		thps_proc_usage(mm->proc, &rss, &huge);
		if (huge > mm->peak_anon_huge_kb)
			mm->peak_anon_huge_kb = huge;
		series_add(&mm->series, r->now_ns, idx, rss, huge);
		sum_rss += rss;
		sum_huge += huge;
	}
	overall_add(r, idx, sum_rss, sum_huge, anon, mhuge);
	if (idx == UINT64_MAX || res->overall.n < REPLAY_SERIES_MAX)
		return;
	/* full: keep every other point and sample half as often from now on */
	r->keep_every *= 2;
	r->stride *= 2;
	series_thin(&res->overall, r->keep_every);
	for (int i = 0; i < res->nmms; i++)
		series_thin(&res->mms[i]->series, r->keep_every);
}

static void series_begin(struct replay *r)
{
	series_add(&r->res->overall, 0, UINT64_MAX, 0, 0);
}

static void series_mm_begin(struct replay *r, struct replay_mm *mm)
{
	series_add(&mm->series, r->now_ns, UINT64_MAX, 0, 0);
}

/* Just before an address space ends (a peak is often there): a point of
 * the machine's series, and its own last point. */
static void series_mm_end(struct replay *r, struct replay_mm *mm)
{
	struct replay_result *res = r->res;
	uint64_t sum_rss = 0, sum_huge = 0, anon, mhuge, rss, huge;
	int live = 0;

	for (int i = 0; i < res->nmms; i++)
		live += !res->mms[i]->ended;
	if (live <= 256) { /* too costly at every exit past that; the schedule still samples */
		figures_machine_now(r, &anon, &mhuge);
		for (int i = 0; i < res->nmms; i++) {
			if (res->mms[i]->ended)
				continue;
			thps_proc_usage(res->mms[i]->proc, &rss, &huge);
			sum_rss += rss;
			sum_huge += huge;
		}
		overall_add(r, UINT64_MAX, sum_rss, sum_huge, anon, mhuge);
	}
	thps_proc_usage(mm->proc, &rss, &huge);
	if (huge > mm->peak_anon_huge_kb)
		mm->peak_anon_huge_kb = huge;
	series_add(&mm->series, r->now_ns, UINT64_MAX, rss, huge);
}

static void series_mm_free(struct replay_mm *mm)
{
	free(mm->series.p);
}

static void series_res_free(struct replay_result *res)
{
	free(res->overall.p);
}

const struct replay_measure measure_series = {
	.name = "series",
	.begin = series_begin,
	.mm_begin = series_mm_begin,
	.tick = series_tick,
	.mm_end = series_mm_end,
	.mm_free = series_mm_free,
	.res_free = series_res_free,
};
