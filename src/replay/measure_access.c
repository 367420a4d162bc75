/*
 * measure_access.c - what the huge pages cover of the memory a program
 * uses (replay.h, struct replay_access).
 *
 * The recorder (record --access) samples, with the kernel's DAMON, which
 * regions of the program's first process it accessed in each interval
 * (DAMON's aggregation interval), and writes them as ACCESS records: the
 * regions, then the sample's end.  Each region is taken at the moment its
 * sample ends, in the model as it stands then (the faults before it
 * made): of its pages, those the model maps, those a PMD maps (a THP or
 * the huge zero page), those in smaller THP folios (an mTHP folio, or a
 * PMD-size folio PTE-mapped after a split), and the translations the
 * mapped pages take: one per 2 MiB range a PMD maps, one per page
 * otherwise (x86-64: a PTE-mapped large folio takes one TLB entry per
 * page).  Coverage and reach, never a speed: that is the user's to weigh.
 *
 * Under another address layout (layout.c) the regions move with the
 * ranges they lie in, piece by piece as the layout shifts them.
 */
#include <stdlib.h>
#include <string.h>

#include "measure.h"

#define RANGE 0x200000ULL

/* What the model maps of [a, b) (thps_range_stats: as smaps counts it,
 * the zero pages included) into the sample. */
static void count_mapped(const struct thps_range_stats *st, struct replay_access_point *pt)
{
	pt->present_kb += st->anon_kb + st->zero_kb + st->huge_zero_kb;
	pt->pmd_kb += st->anon_huge_kb + st->huge_zero_kb;
	/* large folios a PTE maps: mTHP, or a PMD-size folio after a split */
	for (int order = 1; order <= THPS_MTHP_MAX_ORDER; order++)
		pt->mthp_kb += st->folio_kb[order];
	pt->mthp_kb -= st->anon_huge_kb;
	pt->pte_translations += (st->anon_kb + st->zero_kb - st->anon_huge_kb) / 4;
}

/*
 * Of [a, b) (page-aligned, inside one 2 MiB range), what the model maps.
 * A range a PMD maps (a THP or the huge zero page) counts whole, as the
 * kernel's access tracking sees it: one accessed bit for the 2 MiB (DAMON's
 * vaddr check reads the PMD's young bit, damon_va_check_access), so a
 * region that holds part of it looks accessed wherever the 2 MiB was
 * touched, and the regions come to cover the whole of it.  Measured in the
 * 6.12 and 6.18 guests (2026-12-07, tests/progs/accesses heap): the real
 * run's regions held the THP at the edge of what was read whole (11,432
 * kB accessed, 6,144 in THPs) where the recording's, without THPs, held
 * what was read (10,600 kB, the replay 5,228 of it in THPs).  *block: the
 * last PMD-mapped range counted in this sample, + 1: counted once, and one
 * translation (the regions come in address order).
 */
static void take_piece(struct replay_mm *mm, uint64_t a, uint64_t b, struct replay_access_point *pt,
		       uint64_t *block)
{
	struct thps_range_stats st;
	uint64_t lo = a & ~(RANGE - 1);

	if (*block == lo / RANGE + 1) { /* counted whole already */
		pt->accessed_kb -= (b - a) >> 10;
		return;
	}
	if (thps_range_stats(mm->proc, a, b, &st))
		return;
	if (st.anon_huge_kb + st.huge_zero_kb) {
		if (b - a < RANGE && thps_range_stats(mm->proc, lo, lo + RANGE, &st))
			return;
		pt->accessed_kb += (RANGE - (b - a)) >> 10;
		pt->pmd_translations++;
		*block = lo / RANGE + 1;
	}
	count_mapped(&st, pt);
}

/* A region of the current sample, at its addresses in the model. */
static void take_region(struct replay_mm *mm, uint64_t start, uint64_t end,
			struct replay_access_point *pt, uint64_t *block)
{
	start &= ~0xfffULL;
	end = (end + 0xfff) & ~0xfffULL;
	pt->accessed_kb += (end - start) >> 10;
	while (start < end) {
		uint64_t stop = (start & ~(RANGE - 1)) + RANGE;

		if (stop > end)
			stop = end;
		take_piece(mm, start, stop, pt, block);
		start = stop;
	}
}

static void acc_region(struct replay *r, struct replay_mm *mm, const struct trace_event *ev,
		       struct replay_access_point *pt)
{
	uint64_t a = ev->addr, end = ev->addr + ev->len;

	while (a < end) {
		uint64_t limit = end;
		int64_t d = mm->xlat ? xlat_at(mm->xlat, a, &limit) : 0;

		if (limit > end || limit <= a)
			limit = end;
		take_region(mm, a + (uint64_t)d, limit + (uint64_t)d, pt,
			    &r->res->access.pending_block);
		a = limit;
	}
}

static void acc_end(struct replay *r, const struct trace_event *ev, struct replay_access_point *pt)
{
	struct replay_access *acc = &r->res->access;

	pt->t_ns = r->now_ns;
	pt->pid = ev->pid;
	pt->interval_us = ev->acc.interval_us;
	pt->kernel = ev->acc.truth;
	pt->kernel_present_kb = ev->acc.present_kb;
	pt->kernel_pmd_kb = ev->acc.pmd_kb;
	pt->kernel_mthp_kb = ev->acc.mthp_kb;
	if (acc->n == acc->cap) {
		int cap = acc->cap ? acc->cap * 2 : 64;
		struct replay_access_point *v = realloc(acc->p, (size_t)cap * sizeof(*v));

		if (v) {
			acc->p = v;
			acc->cap = cap;
		}
	}
	if (acc->n < acc->cap)
		acc->p[acc->n++] = *pt;
	memset(pt, 0, sizeof(*pt));
	acc->pending_block = 0;
}

/* The sample being built is one at a time (the recorder writes each
 * sample's records together), kept in the result between records. */
static void acc_access(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	struct replay_access_point *pt = &r->res->access.pending;

	if (ev->kind == TRACE_ACCESS_END)
		acc_end(r, ev, pt);
	else if (mm)
		acc_region(r, mm, ev, pt);
}

static void acc_res_free(struct replay_result *res)
{
	free(res->access.p);
	res->access.p = NULL;
	res->access.n = res->access.cap = 0;
}

/* ---- output ---- */

/* The samples' totals: present, PMD, mTHP kB and the kernel's. */
struct acc_sum {
	uint64_t present, pmd, mthp, accessed;
	uint64_t k_present, k_pmd, k_mthp;
	int n, nk;
	double min_pct, max_pct;
	uint64_t pmd_tr, pte_tr;
};

static void acc_sum(const struct replay_access *acc, struct acc_sum *s)
{
	memset(s, 0, sizeof(*s));
	s->min_pct = 100;
	for (int i = 0; i < acc->n; i++) {
		const struct replay_access_point *p = &acc->p[i];

		s->accessed += p->accessed_kb;
		s->present += p->present_kb;
		s->pmd += p->pmd_kb;
		s->mthp += p->mthp_kb;
		s->pmd_tr += p->pmd_translations;
		s->pte_tr += p->pte_translations;
		if (p->present_kb) {
			double pc = 100.0 * (double)p->pmd_kb / (double)p->present_kb;

			s->min_pct = pc < s->min_pct ? pc : s->min_pct;
			s->max_pct = pc > s->max_pct ? pc : s->max_pct;
			s->n++;
		}
		if (p->kernel) {
			s->k_present += p->kernel_present_kb;
			s->k_pmd += p->kernel_pmd_kb;
			s->k_mthp += p->kernel_mthp_kb;
			s->nk++;
		}
	}
}

double replay_access_pmd_pct(const struct replay_result *res)
{
	struct acc_sum s;

	acc_sum(&res->access, &s);
	return s.present ? 100.0 * (double)s.pmd / (double)s.present : -1;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void acc_json(struct json *j, const struct replay_result *res)
{
	const struct replay_access *acc = &res->access;
	struct acc_sum s;

	if (!acc->n && !acc->source[0])
		return;
	acc_sum(acc, &s);
	json_begin_object(j, "access");
	json_string(j, "source", acc->source[0] ? acc->source : "the trace's ACCESS records");
	json_int(j, "samples", (int64_t)acc->n);
	json_uint(j, "accessed_kB", s.accessed);
	json_uint(j, "present_kB", s.present);
	json_uint(j, "pmd_kB", s.pmd);
	json_uint(j, "mthp_kB", s.mthp);
	json_double(j, "pmd_pct", pct(s.pmd, s.present));
	json_double(j, "mthp_pct", pct(s.mthp, s.present));
	json_double(j, "pmd_translations_avg", acc->n ? (double)s.pmd_tr / acc->n : 0);
	json_double(j, "pte_translations_avg", acc->n ? (double)s.pte_tr / acc->n : 0);
	json_begin_array(j, "points");
	for (int i = 0; i < acc->n; i++) {
		const struct replay_access_point *p = &acc->p[i];

		json_begin_object(j, NULL);
		json_uint(j, "t_ms", p->t_ns / 1000000);
		json_int(j, "pid", p->pid);
		json_uint(j, "interval_us", p->interval_us);
		json_uint(j, "accessed_kB", p->accessed_kb);
		json_uint(j, "present_kB", p->present_kb);
		json_uint(j, "pmd_kB", p->pmd_kb);
		json_uint(j, "mthp_kB", p->mthp_kb);
		json_uint(j, "pmd_translations", p->pmd_translations);
		json_uint(j, "pte_translations", p->pte_translations);
		if (p->kernel) {
			json_begin_object(j, "recording_kernel");
			json_uint(j, "present_kB", p->kernel_present_kb);
			json_uint(j, "pmd_kB", p->kernel_pmd_kb);
			json_uint(j, "mthp_kB", p->kernel_mthp_kb);
			json_end_object(j);
		}
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

static void acc_text(FILE *f, const struct replay_result *res)
{
	const struct replay_access *acc = &res->access;
	struct acc_sum s;

	if (!acc->n) {
		if (acc->source[0] && strncmp(acc->source, "damon", 5))
			fprintf(f, "\naccess: not recorded (%s): the coverage above is of the pages "
				   "touched, not of those used\n", acc->source);
		return;
	}
	acc_sum(acc, &s);
	fprintf(f, "\naccess (%d sample%s by DAMON, %s):\n", acc->n, acc->n == 1 ? "" : "s",
		acc->source[0] ? acc->source : "record --access");
	fprintf(f, "  accessed and mapped  %llu kB a sample on average\n",
		(unsigned long long)(s.present / (uint64_t)acc->n));
	fprintf(f, "  in PMD-mapped THPs   %.1f%% (samples from %.1f%% to %.1f%%)\n",
		pct(s.pmd, s.present), s.n ? s.min_pct : 0, s.n ? s.max_pct : 0);
	if (s.mthp)
		fprintf(f, "  in smaller THPs      %.1f%%\n", pct(s.mthp, s.present));
	fprintf(f, "  translations         %.0f of 2 MiB and %.0f of 4 KiB a sample on average\n",
		(double)s.pmd_tr / acc->n, (double)s.pte_tr / acc->n);
	if (s.nk)
		fprintf(f, "  the recording kernel %.1f%% in PMD-mapped THPs (%d sample%s; under its "
			   "own policy)\n",
			pct(s.k_pmd, s.k_present), s.nk, s.nk == 1 ? "" : "s");
}

const struct replay_measure measure_access = {
	.name = "access",
	.access = acc_access,
	.res_free = acc_res_free,
	.json = acc_json,
	.text = acc_text,
};
