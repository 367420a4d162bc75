/*
 * measure_occupancy.c - how full the program keeps each 2 MiB range, and
 * how much of what it touched a PMD maps (replay.h, struct
 * replay_occupancy).
 *
 * Each address space keeps a table of the 2 MiB-aligned ranges it touched:
 * a bit per page for "touched" (a first read or write in the trace) and
 * one for "written".  A range of pages unmapped or dropped (munmap, a
 * mapping made over it, MADV_DONTNEED) is forgotten; mremap moves its
 * bits; a forked child starts with its parent's (its pages are the
 * parent's until it writes them, and the trace records only the child's
 * own first writes).  The pages the program touched are the policy's
 * business only in what maps them: the histograms are the same under
 * every policy, the coverage is not.
 *
 * The histograms are taken at the end of each address space and, as the
 * mappings measure does for its peak, before each call that frees memory
 * when more pages are touched than at the last such view by over 1/64.  The coverage
 * over time, at each sample of the series: the touched pages of the live
 * address spaces, and those in ranges a PMD maps (a THP, or the huge zero
 * page for pages only read).
 *
 * The mTHP coverage: of the touched pages, those a PTE maps from a large
 * folio below the PMD size (a 64K folio faulted in whole, say), by the
 * folio's size, page by page (an mTHP folio need not fill its range, nor
 * every page of it be touched).  Only while the machine holds mTHP folios
 * (hugepages-<size>kB/stats/nr_anon): otherwise none can be mapped, and
 * the ranges are not walked.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "trace/linux_abi.h"

#define RANGE_SHIFT 21
#define RANGE_PAGES 512

struct occ_range {
	uint64_t key;             /* (address >> 21) + 1; 0: an empty slot */
	uint64_t touched[8], written[8];
	uint16_t nt, nw;
};

struct occ_ranges {
	struct occ_range *v;
	uint64_t cap, used;       /* slots, and slots with a key */
	uint64_t touched, written; /* pages, over every range */
	uint64_t peak_touched;    /* touched pages at the last peak view */
};

/* ---- the table: open addressing, linear probing, never shrinks ---- */
static uint64_t slot_of(uint64_t key, uint64_t cap)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> 7 & (cap - 1);
}

static struct occ_range *occ_find(const struct occ_ranges *o, uint64_t key)
{
	if (!o->cap)
		return NULL;
	for (uint64_t i = slot_of(key, o->cap);; i = (i + 1) & (o->cap - 1)) {
		if (o->v[i].key == key)
			return &o->v[i];
		if (!o->v[i].key)
			return NULL;
	}
}

static int occ_grow(struct occ_ranges *o)
{
	uint64_t cap = o->cap ? o->cap * 2 : 64;
	struct occ_range *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (uint64_t i = 0; i < o->cap; i++) {
		uint64_t j;

		if (!o->v[i].key)
			continue;
		for (j = slot_of(o->v[i].key, cap); v[j].key; j = (j + 1) & (cap - 1))
			;
		v[j] = o->v[i];
	}
	free(o->v);
	o->v = v;
	o->cap = cap;
	return 0;
}

static struct occ_range *occ_get(struct occ_ranges *o, uint64_t key)
{
	struct occ_range *e = occ_find(o, key);
	uint64_t i;

	if (e)
		return e;
	if ((o->used + 1) * 4 > o->cap * 3 && occ_grow(o))
		return NULL;
	for (i = slot_of(key, o->cap); o->v[i].key; i = (i + 1) & (o->cap - 1))
		;
	o->v[i].key = key;
	o->used++;
	return &o->v[i];
}

/* ---- bits ---- */
/* Pages [first, first + n) of one range, set (or cleared) in bits;
 * returns how many changed. */
static unsigned bits_change(uint64_t bits[8], unsigned first, unsigned n, int set)
{
	unsigned changed = 0;

	while (n) {
		unsigned w = first / 64, b = first % 64, k = n < 64 - b ? n : 64 - b;
		uint64_t mask = (k == 64 ? ~0ULL : ((1ULL << k) - 1)) << b;
		uint64_t before = bits[w];

		bits[w] = set ? before | mask : before & ~mask;
		changed += (unsigned)__builtin_popcountll(before ^ bits[w]);
		first += k;
		n -= k;
	}
	return changed;
}

static void occ_set(struct occ_ranges *o, uint64_t start, uint64_t pages, int write)
{
	uint64_t page = start >> 12, end = page + pages;

	while (page < end) {
		uint64_t key = (page >> 9) + 1;
		unsigned first = page & (RANGE_PAGES - 1);
		unsigned n = end - page < RANGE_PAGES - first ? (unsigned)(end - page) : RANGE_PAGES - first;
		struct occ_range *e = occ_get(o, key);
		unsigned d;

		if (!e)
			return;
		d = bits_change(e->touched, first, n, 1);
		e->nt += d;
		o->touched += d;
		if (write) {
			d = bits_change(e->written, first, n, 1);
			e->nw += d;
			o->written += d;
		}
		page += n;
	}
}

/* Forget pages [start, start + len) (and hand them to fn, if any, first). */
static void occ_clear(struct occ_ranges *o, uint64_t start, uint64_t len,
		      void (*fn)(void *arg, uint64_t addr, int written), void *arg)
{
	uint64_t first = start >> 12, end = (start + len) >> 12;
	uint64_t lo = first >> 9, hi = (end + RANGE_PAGES - 1) >> 9;

	if (!o->used || end <= first)
		return;
	for (uint64_t i = 0; i < (hi - lo < o->cap ? hi - lo : o->cap); i++) {
		/* few ranges: look each up; many: walk the table instead */
		struct occ_range *e = hi - lo < o->cap ? occ_find(o, lo + i + 1) : &o->v[i];
		uint64_t base, from, to;

		if (!e || !e->key || !e->nt)
			continue;
		base = (e->key - 1) << 9;
		from = first > base ? first - base : 0;
		to = end < base + RANGE_PAGES ? end - base : RANGE_PAGES;
		if (base >= end || base + RANGE_PAGES <= first)
			continue;
		if (fn)
			for (uint64_t p = from; p < to; p++)
				if (e->touched[p / 64] >> (p % 64) & 1)
					fn(arg, (base + p) << 12, (int)(e->written[p / 64] >> (p % 64) & 1));
		{
			unsigned dt = bits_change(e->touched, (unsigned)from, (unsigned)(to - from), 0);
			unsigned dw = bits_change(e->written, (unsigned)from, (unsigned)(to - from), 0);

			e->nt -= dt;
			e->nw -= dw;
			o->touched -= dt;
			o->written -= dw;
		}
	}
}

/* ---- the histograms and the coverage ---- */
static int bucket(unsigned n)
{
	return n >= RANGE_PAGES ? REPLAY_OCC_BUCKETS - 1 : (int)((n - 1) / 64);
}

/* The range's first address. */
static uint64_t range_base(const struct occ_range *e)
{
	return (e->key - 1) << RANGE_SHIFT;
}

/* The first touched page of a range, as an address. */
static uint64_t first_touched(const struct occ_range *e)
{
	for (int w = 0; w < 8; w++)
		if (e->touched[w])
			return range_base(e) + (((uint64_t)w * 64 + (uint64_t)__builtin_ctzll(e->touched[w])) << 12);
	return range_base(e);
}

/* Is the range a PMD maps now (a THP or the huge zero page)?  Its base
 * stands for it: one PMD maps all of its 2 MiB, or none. */
static int pmd_mapped(struct replay_mm *mm, const struct occ_range *e)
{
	uint64_t base = range_base(e);
	uint8_t mapped = 0;

	return !thps_pmd_mapped(mm->proc, &base, 1, &mapped) && mapped;
}

/* Does the machine hold any mTHP folio (orders below the PMD's)? */
static int mthp_live(thps_machine *m)
{
	uint64_t st[THPS_NR_MTHP_STATS];

	for (int order = THPS_MTHP_MIN_ORDER; order < REPLAY_MTHP_ORDERS; order++)
		if (!thps_mthp_stats(m, order, st) && st[THPS_MTHP_nr_anon])
			return 1;
	return 0;
}

/* Of range e's touched pages, those mapped from mTHP folios, into kb by
 * the folio's order. */
static void mthp_touched(struct replay_mm *mm, const struct occ_range *e,
			 uint64_t kb[REPLAY_MTHP_ORDERS])
{
	uint8_t order[RANGE_PAGES];
	uint64_t base = range_base(e);

	if (thps_folio_orders(mm->proc, base, base + (RANGE_PAGES << 12), order))
		return;
	for (unsigned p = 0; p < RANGE_PAGES; p++)
		if (order[p] && order[p] < REPLAY_MTHP_ORDERS && (e->touched[p / 64] >> (p % 64) & 1))
			kb[order[p]] += 4;
}

/* Range e's touched pages in huge mappings: in a range a PMD maps
 * (mapped: pmd_mapped's answer), or (mthp set) page by page in mTHP
 * folios. */
static void covered(struct replay_mm *mm, const struct occ_range *e, int mapped, int mthp,
		    uint64_t *huge_kb, uint64_t mthp_kb[REPLAY_MTHP_ORDERS])
{
	if (mapped)
		*huge_kb += 4ULL * e->nt;
	else if (mthp)
		mthp_touched(mm, e, mthp_kb);
}

static void occ_histogram(struct replay *r, struct replay_mm *mm, struct replay_occupancy *out)
{
	const struct occ_ranges *o = mm->occ;
	int mthp;

	memset(out, 0, sizeof(*out));
	if (!o)
		return;
	mthp = mthp_live(r->m);
	for (uint64_t i = 0; i < o->cap; i++) {
		const struct occ_range *e = &o->v[i];
		int kind;

		if (!e->key || !e->nt)
			continue;
		kind = replay_kind_at(mm, first_touched(e));
		out->ranges[kind][0][bucket(e->nt)]++;
		if (e->nw)
			out->ranges[kind][1][bucket(e->nw)]++;
		covered(mm, e, pmd_mapped(mm, e), mthp, &out->touched_huge_kb, out->touched_mthp_kb);
	}
	out->touched_kb = 4 * o->touched;
	out->written_kb = 4 * o->written;
}

static void occ_add(struct replay_occupancy *to, const struct replay_occupancy *f)
{
	uint64_t *a = &to->ranges[0][0][0];
	const uint64_t *b = &f->ranges[0][0][0];

	for (size_t i = 0; i < sizeof(to->ranges) / sizeof(*a); i++)
		a[i] += b[i];
	to->touched_kb += f->touched_kb;
	to->written_kb += f->written_kb;
	to->touched_huge_kb += f->touched_huge_kb;
	for (int i = 0; i < REPLAY_MTHP_ORDERS; i++)
		to->touched_mthp_kb[i] += f->touched_mthp_kb[i];
}

void replay_occupancy_sum(const struct replay_result *res, int peak, struct replay_occupancy *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < res->nmms; i++)
		occ_add(out, peak ? &res->mms[i]->occ_peak : &res->mms[i]->occ_final);
}

/* ---- the callbacks ---- */
static void occ_mm_begin(struct replay *r, struct replay_mm *mm)
{
	(void)r;
	mm->occ = calloc(1, sizeof(*mm->occ));
}

static void occ_touch(struct replay *r, struct replay_mm *mm, uint64_t start, uint64_t pages, int write)
{
	(void)r;
	if (mm->occ)
		occ_set(mm->occ, start, pages, write);
}

struct moved {
	uint64_t *addr;
	uint8_t *written;
	uint64_t n, cap;
};

static void collect_moved(void *arg, uint64_t addr, int written)
{
	struct moved *m = arg;

	if (m->n == m->cap) {
		uint64_t cap = m->cap ? m->cap * 2 : 256;
		uint64_t *a = realloc(m->addr, cap * sizeof(*a));
		uint8_t *w = a ? realloc(m->written, cap) : NULL;

		if (a)
			m->addr = a;
		if (!a || !w)
			return;
		m->written = w;
		m->cap = cap;
	}
	m->addr[m->n] = addr;
	m->written[m->n++] = (uint8_t)written;
}

static void occ_mapping(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e)
{
	struct occ_ranges *o = mm->occ;

	(void)r;
	if (!o)
		return;
	switch (e->op) {
	case REPLAY_MAP_NEW:
	case REPLAY_MAP_UNMAP:
		occ_clear(o, e->start, e->len, NULL, NULL);
		break;
	case REPLAY_MAP_MOVE: {
		struct moved m = { 0 };

		occ_clear(o, e->old, e->old_len, collect_moved, &m);
		occ_clear(o, e->start, e->len, NULL, NULL);
		for (uint64_t i = 0; i < m.n; i++)
			occ_set(o, m.addr[i] - e->old + e->start, 1, m.written[i]);
		free(m.addr);
		free(m.written);
		break;
	}
	case REPLAY_MAP_ADVISE:
		if (e->advice == LINUX_MADV_DONTNEED || e->advice == LINUX_MADV_DONTNEED_LOCKED ||
		    e->advice == LINUX_MADV_GUARD_INSTALL)
			occ_clear(o, e->start, e->len, NULL, NULL);
		break;
	}
}

/* Memory is about to go: the peak view, if more is touched than at the
 * last by over 1/64 (as the mappings measure takes its own). */
static void occ_freeing(struct replay *r, struct replay_mm *mm)
{
	if (mm->occ && mm->occ->touched > mm->occ->peak_touched + (mm->occ->peak_touched >> 6)) {
		occ_histogram(r, mm, &mm->occ_peak);
		mm->occ->peak_touched = mm->occ->touched;
	}
}

static void occ_fork(struct replay *r, struct replay_mm *parent, struct replay_mm *child)
{
	(void)r;
	if (!parent->occ || !child->occ || !parent->occ->cap)
		return;
	child->occ->v = malloc(parent->occ->cap * sizeof(*child->occ->v));
	if (!child->occ->v)
		return;
	memcpy(child->occ->v, parent->occ->v, parent->occ->cap * sizeof(*child->occ->v));
	child->occ->cap = parent->occ->cap;
	child->occ->used = parent->occ->used;
	child->occ->touched = parent->occ->touched;
	child->occ->written = parent->occ->written;
}

/* covered(), for every touched range of mm into pt: pmd_mapped's question
 * asked in batches, each under one hold of the process's lock (a point of the series
 * asks for every range; one page walk and lock each took a quarter of a
 * 1 GiB trace's replay with every measure). */
static void covered_all(struct replay_mm *mm, int mthp, struct replay_coverage_point *pt)
{
	enum { BATCH = 256 };
	const struct occ_ranges *o = mm->occ;
	uint64_t addr[BATCH], idx[BATCH];
	uint8_t mapped[BATCH];
	uint64_t j = 0;

	while (j < o->cap) {
		size_t n = 0;

		for (; j < o->cap && n < BATCH; j++)
			if (o->v[j].nt) {
				idx[n] = j;
				addr[n++] = range_base(&o->v[j]);
			}
		if (!n || thps_pmd_mapped(mm->proc, addr, n, mapped))
			continue;
		for (size_t k = 0; k < n; k++)
			covered(mm, &o->v[idx[k]], mapped[k], mthp, &pt->touched_huge_kb,
				pt->touched_mthp_kb);
	}
}

/* A point of the coverage series: the live address spaces' touched pages
 * and those a PMD maps; thinned as the series is (measure_series.c, which
 * runs first and has doubled keep_every if it was full). */
static void occ_tick(struct replay *r, uint64_t idx)
{
	struct replay_result *res = r->res;
	struct replay_coverage_point pt = { .t_ns = r->now_ns, .idx = idx };
	struct replay_coverage *c = &res->coverage;
	int k = 0, mthp = mthp_live(r->m);

	for (int i = 0; i < res->nmms; i++) {
		struct replay_mm *mm = res->mms[i];

		if (mm->ended || !mm->occ)
			continue;
		pt.touched_kb += 4 * mm->occ->touched;
		covered_all(mm, mthp, &pt);
	}
	if (c->n == c->cap) {
		int cap = c->cap ? c->cap * 2 : 64;
		struct replay_coverage_point *v = realloc(c->p, (size_t)cap * sizeof(*v));

		if (!v)
			return;
		c->p = v;
		c->cap = cap;
	}
	c->p[c->n++] = pt;
	if (c->n < REPLAY_SERIES_MAX || r->keep_every <= 1)
		return;
	for (int i = 0; i < c->n; i++)
		if (c->p[i].idx == UINT64_MAX || c->p[i].idx % r->keep_every == 0)
			c->p[k++] = c->p[i];
	c->n = k;
}

static void occ_mm_end(struct replay *r, struct replay_mm *mm)
{
	occ_histogram(r, mm, &mm->occ_final);
	if (mm->occ && mm->occ->touched > mm->occ->peak_touched) {
		mm->occ_peak = mm->occ_final;
		mm->occ->peak_touched = mm->occ->touched;
	}
}

static void occ_mm_free(struct replay_mm *mm)
{
	if (mm->occ)
		free(mm->occ->v);
	free(mm->occ);
	mm->occ = NULL;
}

static void occ_res_free(struct replay_result *res)
{
	free(res->coverage.p);
	res->coverage = (struct replay_coverage){ 0 };
}

/* ---- output ---- */
static const char *const bucket_names[REPLAY_OCC_BUCKETS] = {
	"1-64", "65-128", "129-192", "193-256", "257-320", "321-384", "385-448", "449-511", "512"
};

const char *replay_occ_bucket_name(int b)
{
	return b >= 0 && b < REPLAY_OCC_BUCKETS ? bucket_names[b] : NULL;
}

const char *replay_folio_size_name(int order, char *buf, size_t len)
{
	uint64_t kb = 4ULL << order;

	if (kb >= 1024)
		snprintf(buf, len, "%" PRIu64 "M", kb >> 10);
	else
		snprintf(buf, len, "%" PRIu64 "K", kb);
	return buf;
}

/* kb by folio order, as an object keyed by size: the sizes in mask only
 * (bit order), nothing when mask is empty. */
static void json_mthp(struct json *j, const uint64_t kb[REPLAY_MTHP_ORDERS], unsigned mask)
{
	char name[16];

	if (!mask)
		return;
	json_begin_object(j, "touched_in_mthp_kB");
	for (int order = 1; order < REPLAY_MTHP_ORDERS; order++)
		if (mask >> order & 1)
			json_uint(j, replay_folio_size_name(order, name, sizeof(name)), kb[order]);
	json_end_object(j);
}

/* The orders kb has any of, as a mask. */
static unsigned mthp_mask(const uint64_t kb[REPLAY_MTHP_ORDERS])
{
	unsigned mask = 0;

	for (int order = 1; order < REPLAY_MTHP_ORDERS; order++)
		if (kb[order])
			mask |= 1U << order;
	return mask;
}

/* The figures, and with ranges the histograms by kind. */
static void json_occupancy(struct json *j, const char *key, const struct replay_occupancy *o,
			   int ranges)
{
	json_begin_object(j, key);
	json_uint(j, "touched_kB", o->touched_kb);
	json_uint(j, "written_kB", o->written_kb);
	json_uint(j, "touched_in_pmd_kB", o->touched_huge_kb);
	json_mthp(j, o->touched_mthp_kb, mthp_mask(o->touched_mthp_kb));
	if (!ranges) {
		json_end_object(j);
		return;
	}
	json_begin_object(j, "ranges");
	for (int k = 0; k < REPLAY_NR_MAP_KINDS; k++) {
		uint64_t any = 0;

		for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
			any |= o->ranges[k][0][b];
		if (!any)
			continue;
		json_begin_object(j, replay_map_kind_name(k));
		for (int w = 0; w < 2; w++) {
			json_begin_object(j, w ? "written" : "touched");
			for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
				json_uint(j, bucket_names[b], o->ranges[k][w][b]);
			json_end_object(j);
		}
		json_end_object(j);
	}
	json_end_object(j);
	json_end_object(j);
}

static void occ_json_mm(struct json *j, const struct replay_mm *mm)
{
	/* per process the figures; the histograms are the result's */
	json_begin_object(j, "occupancy");
	json_occupancy(j, "final", &mm->occ_final, 0);
	json_occupancy(j, "peak", &mm->occ_peak, 0);
	json_end_object(j);
}

static void occ_json(struct json *j, const struct replay_result *res)
{
	struct replay_occupancy o;
	unsigned mask = 0;

	for (int i = 0; i < res->coverage.n; i++)
		mask |= mthp_mask(res->coverage.p[i].touched_mthp_kb);
	json_begin_object(j, "occupancy");
	replay_occupancy_sum(res, 0, &o);
	json_occupancy(j, "final", &o, 1);
	replay_occupancy_sum(res, 1, &o);
	json_occupancy(j, "peak", &o, 1);
	json_end_object(j);
	json_begin_array(j, "coverage");
	for (int i = 0; i < res->coverage.n; i++) {
		json_begin_object(j, NULL);
		json_double(j, "t_s", (double)res->coverage.p[i].t_ns * 1e-9);
		json_uint(j, "touched_kB", res->coverage.p[i].touched_kb);
		json_uint(j, "touched_in_pmd_kB", res->coverage.p[i].touched_huge_kb);
		/* every point the sizes of any, so that each has the same keys */
		json_mthp(j, res->coverage.p[i].touched_mthp_kb, mask);
		json_end_object(j);
	}
	json_end_array(j);
}

static void occ_text(FILE *f, const struct replay_result *res)
{
	struct replay_occupancy o;
	uint64_t total[2][REPLAY_OCC_BUCKETS] = { { 0 } };

	replay_occupancy_sum(res, 1, &o);
	for (int k = 0; k < REPLAY_NR_MAP_KINDS; k++)
		for (int w = 0; w < 2; w++)
			for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
				total[w][b] += o.ranges[k][w][b];
	fprintf(f, "\noccupancy of the 2 MiB ranges at each process's peak, summed: how many of "
		   "their 512 pages\nthe program touched (wrote); %" PRIu64 " kB touched, %.1f%% of it "
		   "mapped by PMDs\n  %-10s", o.touched_kb,
		o.touched_kb ? 100.0 * (double)o.touched_huge_kb / (double)o.touched_kb : 0.0, "pages");
	for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
		fprintf(f, " %8s", bucket_names[b]);
	fprintf(f, "\n");
	for (int w = 0; w < 2; w++) {
		fprintf(f, "  %-10s", w ? "written" : "touched");
		for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
			fprintf(f, " %8" PRIu64, total[w][b]);
		fprintf(f, "\n");
	}
	for (int order = 1; order < REPLAY_MTHP_ORDERS; order++) {
		char name[16];

		if (o.touched_mthp_kb[order])
			fprintf(f, "  in %s folios (mTHP, PTE-mapped): %" PRIu64 " kB, %.1f%% of the "
				   "touched\n", replay_folio_size_name(order, name, sizeof(name)),
				o.touched_mthp_kb[order],
				100.0 * (double)o.touched_mthp_kb[order] / (double)o.touched_kb);
	}
}

const struct replay_measure measure_occupancy = {
	.name = "occupancy",
	.mm_begin = occ_mm_begin,
	.freeing = occ_freeing,
	.mapping = occ_mapping,
	.fork = occ_fork,
	.touch = occ_touch,
	.tick = occ_tick,
	.mm_end = occ_mm_end,
	.mm_free = occ_mm_free,
	.res_free = occ_res_free,
	.json_mm = occ_json_mm,
	.json = occ_json,
	.text = occ_text,
};
