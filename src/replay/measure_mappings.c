/*
 * measure_mappings.c - attribution by mapping: which anonymous mapping the
 * memory sits in, and where that mapping came from.
 *
 * Each address space keeps its mappings as the calls made them (struct
 * replay_mapping, sorted by address): exec's anonymous VMAs (the stack,
 * the heap, bss), each anonymous private mmap, the heap's growth by brk.
 * munmap and a mapping made over another cut them; mremap moves the pieces
 * it takes (growing the last one); madvise(MADV_HUGEPAGE/NOHUGEPAGE)
 * marks the pieces it covers.  Two calls' mappings that the kernel merged
 * into one VMA stay two here, so a heap and the mmap beside it are told
 * apart.
 *
 * Figures are the model's, counted over each mapping's range as smaps
 * counts a VMA (thps_range_anon), so the mappings of an address space,
 * with "other" for memory in a VMA that no recorded call explains, sum
 * exactly to its Anonymous and AnonHugePages.  A stack grown below what
 * exec recorded (a GROWSDOWN VMA) is the stack's.  "final" is taken just before the address space ends;
 * "peak" at its highest Anonymous, within 1/64: taken before each call
 * that frees memory when the Anonymous is above the last view by more
 * than 1/64 of it, and at the end (mappings_tick says when a sample takes
 * it too).  A mapping unmapped
 * after it held memory at a peak is kept, with when it went.
 */
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "trace/linux_abi.h"

#define KIND_NAME(name, label, desc) #name,
#define KIND_LABEL(name, label, desc) label,
static const char *const kind_names[] = { REPLAY_MAP_KINDS(KIND_NAME) };
static const char *const kind_labels[] = { REPLAY_MAP_KINDS(KIND_LABEL) };
#undef KIND_NAME
#undef KIND_LABEL

const char *replay_map_kind_name(int kind)
{
	return kind >= 0 && kind < REPLAY_NR_MAP_KINDS ? kind_names[kind] : NULL;
}

const char *replay_map_kind_label(int kind)
{
	return kind >= 0 && kind < REPLAY_NR_MAP_KINDS ? kind_labels[kind] : NULL;
}

/* ---- the sorted list ---- */
static struct replay_mapping *maps_grow(struct replay_mappings *l)
{
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		struct replay_mapping *v = realloc(l->v, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	return l->v;
}

/* The first mapping that ends above addr. */
static int maps_find(const struct replay_mappings *l, uint64_t addr)
{
	int lo = 0, hi = l->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (l->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void maps_insert_at(struct replay_mappings *l, int i, const struct replay_mapping *m)
{
	if (!maps_grow(l))
		return;
	if (i < l->n)
		memmove(l->v + i + 1, l->v + i, (size_t)(l->n - i) * sizeof(*l->v));
	l->v[i] = *m;
	l->n++;
}

/* Split the mapping that holds addr (not at its start) in two at addr. */
static void maps_split(struct replay_mappings *l, uint64_t addr)
{
	int i = maps_find(l, addr);
	struct replay_mapping tail;

	if (i >= l->n || l->v[i].start >= addr)
		return;
	tail = l->v[i];
	tail.start = addr;
	l->v[i].end = addr;
	maps_insert_at(l, i + 1, &tail);
}

/* Take [start, end) out of the list; out (may be NULL) gets the pieces. */
static void maps_cut(struct replay_mm *mm, uint64_t start, uint64_t end, struct replay_mappings *out)
{
	struct replay_mappings *l = &mm->maps;
	int i, k;

	maps_split(l, start);
	maps_split(l, end);
	i = maps_find(l, start);
	for (k = i; k < l->n && l->v[k].start < end; k++)
		if (out && maps_grow(out))
			out->v[out->n++] = l->v[k];
	if (k > i && k < l->n)
		memmove(l->v + i, l->v + k, (size_t)(l->n - k) * sizeof(*l->v));
	l->n -= k - i;
}

/* ---- figures ---- */
struct vma_span {
	uint64_t (*v)[2];
	int n, cap;
};

static void collect_span(void *arg, uint64_t start, uint64_t end, int prot, const char *flags)
{
	struct vma_span *s = arg;

	(void)prot;
	(void)flags;
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 32;
		void *v = realloc(s->v, (size_t)cap * sizeof(*s->v));

		if (!v)
			return;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n][0] = start;
	s->v[s->n][1] = end;
	s->n++;
}

static void add_stats(thps_proc *p, uint64_t start, uint64_t end, struct replay_map_figures *f)
{
	uint64_t anon, huge;

	if (start >= end || thps_range_anon(p, start, end, &anon, &huge))
		return;
	f->anon_kb += anon;
	f->anon_huge_kb += huge;
}

/* The figures of [start, end), inside one VMA, into the piece or "other"
 * they belong to and, at the end, into the VMA's. */
static void add_both(thps_proc *p, uint64_t start, uint64_t end, struct replay_map_figures *f,
		     struct replay_map_figures *vma)
{
	struct replay_map_figures part = { 0 };

	add_stats(p, start, end, &part);
	f->anon_kb += part.anon_kb;
	f->anon_huge_kb += part.anon_huge_kb;
	if (vma) {
		vma->anon_kb += part.anon_kb;
		vma->anon_huge_kb += part.anon_huge_kb;
	}
}

/* Every piece's figures now (in its "final"), and what lies in the VMAs
 * outside every piece into *other; with vmas (at the end), each VMA's
 * figures into mm->vmas too.  One walk of each VMA: a piece that spans
 * two VMAs is counted in each part. */
static void take_figures(struct replay_mm *mm, struct replay_map_figures *other, int vmas)
{
	struct vma_span s = { 0 };

	*other = (struct replay_map_figures){ 0 };
	for (int k = 0; k < mm->maps.n; k++)
		mm->maps.v[k].final = (struct replay_map_figures){ 0 };
	thps_for_each_vma(mm->proc, collect_span, &s);
	if (vmas)
		mm->vmas.n = 0;
	for (int v = 0; v < s.n; v++) {
		uint64_t at = s.v[v][0], end = s.v[v][1];
		struct replay_map_figures *vf = NULL;

		if (vmas && maps_grow(&mm->vmas)) {
			struct replay_mapping *e = &mm->vmas.v[mm->vmas.n++];

			*e = (struct replay_mapping){ .start = at, .end = end };
			vf = &e->final;
		}
		for (int k = maps_find(&mm->maps, at); k < mm->maps.n && mm->maps.v[k].start < end; k++) {
			struct replay_mapping *m = &mm->maps.v[k];

			if (m->start > at && m->kind == REPLAY_MAP_stack) {
				/* the stack grew down (a GROWSDOWN VMA): its own */
				m->start = at;
			} else if (m->start > at) {
				add_both(mm->proc, at, m->start, other, vf);
				at = m->start;
			}
			add_both(mm->proc, at, m->end < end ? m->end : end, &m->final, vf);
			if (m->end > at)
				at = m->end;
		}
		if (at < end)
			add_both(mm->proc, at, end, other, vf);
	}
	free(s.v);
}

/* The pieces as they are now, with the figures take_figures put in them,
 * kept as the peak view at Anonymous rss. */
static void keep_as_peak(struct replay_mm *mm, uint64_t rss)
{
	struct replay_mappings *p = &mm->maps_at_peak;

	if (p->cap < mm->maps.n) {
		struct replay_mapping *v = realloc(p->v, (size_t)mm->maps.n * sizeof(*v));

		if (!v)
			return;
		p->v = v;
		p->cap = mm->maps.n;
	}
	if (mm->maps.n)
		memcpy(p->v, mm->maps.v, (size_t)mm->maps.n * sizeof(*p->v));
	p->n = mm->maps.n;
	mm->maps_peak_anon_kb = rss;
}

/* The pieces and their figures again, as the peak, when the Anonymous is
 * above the last peak's by more than last >> slack_shift (0: any). */
static void take_peak(struct replay_mm *mm, uint64_t slack_shift)
{
	uint64_t rss, last = mm->maps_peak_anon_kb;

	thps_proc_usage(mm->proc, &rss, NULL);
	if (!rss || rss <= last + (slack_shift ? last >> slack_shift : 0))
		return;
	take_figures(mm, &mm->other_peak, 0);
	keep_as_peak(mm, rss);
}

int replay_kind_at(const struct replay_mm *mm, uint64_t addr)
{
	int i = maps_find(&mm->maps, addr);

	return i < mm->maps.n && mm->maps.v[i].start <= addr ? mm->maps.v[i].kind : REPLAY_MAP_other;
}

/* ---- the calls ---- */
static int kind_of_mmap(uint64_t len, int flags)
{
	if (flags & LINUX_MAP_STACK)
		return REPLAY_MAP_thread_stack;
	if (len < 256 << 10)
		return REPLAY_MAP_mmap_small;
	if (len < 2 << 20)
		return REPLAY_MAP_mmap_medium;
	if (len < 32 << 20)
		return REPLAY_MAP_mmap_large;
	return REPLAY_MAP_mmap_huge;
}

static const char *const call_names[] = { "exec", "mmap", "brk", "mremap" };

static void map_new(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e)
{
	struct replay_mapping m = {
		.start = e->start, .end = e->start + e->len, .kind = e->kind,
		.call = call_names[e->call], .caller = e->caller, .t_ns = r->now_ns,
		.len0 = e->len, .prot = e->prot, .flags = e->flags,
	};
	int i;

	if (e->kind < 0)
		m.kind = kind_of_mmap(e->len, e->flags);
	maps_cut(mm, m.start, m.end, NULL);
	i = maps_find(&mm->maps, m.start);
	/* the heap grows by brk: one mapping */
	if (m.kind == REPLAY_MAP_heap && i > 0 && mm->maps.v[i - 1].kind == REPLAY_MAP_heap &&
	    mm->maps.v[i - 1].end == m.start) {
		mm->maps.v[i - 1].end = m.end;
		return;
	}
	m.id = ++mm->maps_next_id;
	maps_insert_at(&mm->maps, i, &m);
}

/* mremap: the pieces of [old, old+old_len) go to start, the last one
 * grown when the new length is larger; what was at the target is gone. */
static void map_move(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e)
{
	struct replay_mappings pieces = { 0 };
	uint64_t new_end = e->start + e->len, top = e->start;
	int64_t delta = (int64_t)(e->start - e->old);

	maps_cut(mm, e->old, e->old + e->old_len, &pieces);
	maps_cut(mm, e->start, new_end, NULL);
	for (int k = 0; k < pieces.n; k++) {
		struct replay_mapping m = pieces.v[k];

		m.start = (uint64_t)((int64_t)m.start + delta);
		m.end = (uint64_t)((int64_t)m.end + delta);
		if (m.start >= new_end)
			continue; /* shrunk away */
		if (m.end > new_end || (k == pieces.n - 1 && e->len > e->old_len))
			m.end = new_end;
		top = m.end;
		maps_insert_at(&mm->maps, maps_find(&mm->maps, m.start), &m);
	}
	free(pieces.v);
	if (top < new_end) { /* grown from a range we held nothing of */
		struct replay_map_event n = { .op = REPLAY_MAP_NEW, .start = top,
					      .len = new_end - top, .kind = -1,
					      .call = REPLAY_CALL_mremap, .prot = e->prot,
					      .caller = e->caller };

		map_new(r, mm, &n);
	}
}

static void map_advise(struct replay_mm *mm, const struct replay_map_event *e)
{
	uint64_t end = e->start + e->len;

	if (e->advice != LINUX_MADV_HUGEPAGE && e->advice != LINUX_MADV_NOHUGEPAGE)
		return;
	maps_split(&mm->maps, e->start);
	maps_split(&mm->maps, end);
	for (int i = maps_find(&mm->maps, e->start); i < mm->maps.n && mm->maps.v[i].start < end; i++)
		mm->maps.v[i].advice = e->advice;
}

/* Memory is about to go: if this is the peak, take it; within 1/64 of
 * the last view, not (a walk of every VMA at each free of a growing
 * program cost it 1.7x its replay time: thpsim bench, "8 processes
 * churn"), so the view is within 1/64 of the peak, and exact where the
 * end is the peak. */
static void mappings_freeing(struct replay *r, struct replay_mm *mm)
{
	(void)r;
	take_peak(mm, 6);
}

static void mappings_mapping(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e)
{
	switch (e->op) {
	case REPLAY_MAP_NEW:
		map_new(r, mm, e);
		break;
	case REPLAY_MAP_UNMAP:
		maps_cut(mm, e->start, e->start + e->len, NULL);
		break;
	case REPLAY_MAP_MOVE:
		map_move(r, mm, e);
		break;
	case REPLAY_MAP_ADVISE:
		map_advise(mm, e);
		break;
	}
}

static void mappings_fork(struct replay *r, struct replay_mm *parent, struct replay_mm *child)
{
	(void)r;
	child->maps_next_id = parent->maps_next_id;
	if (!parent->maps.n)
		return;
	child->maps.v = malloc((size_t)parent->maps.n * sizeof(*child->maps.v));
	if (!child->maps.v)
		return;
	child->maps.n = child->maps.cap = parent->maps.n;
	memcpy(child->maps.v, parent->maps.v, (size_t)parent->maps.n * sizeof(*child->maps.v));
}

/* ---- the report: one entry per mapping ---- */
static void fig_add(struct replay_map_figures *to, const struct replay_map_figures *f)
{
	to->anon_kb += f->anon_kb;
	to->anon_huge_kb += f->anon_huge_kb;
}

/* A piece for the report: alive at the end (final) or at the peak. */
struct tagged {
	const struct replay_mapping *m;
	int at_peak;
};

static int by_id(const void *a, const void *b)
{
	const struct tagged *x = a, *y = b;

	if (x->m->id != y->m->id)
		return x->m->id < y->m->id ? -1 : 1;
	return x->at_peak - y->at_peak; /* the end's pieces first: their ranges */
}

/* The pieces alive at the end (final) and at the peak (peak), gathered by
 * mapping, in the order the mappings were made: a mapping found only at
 * the peak went before the end. */
static void build_report(struct replay_mm *mm)
{
	struct replay_mappings *l = &mm->mappings;
	int n = mm->maps.n + mm->maps_at_peak.n, k = 0;
	struct tagged *t = malloc((size_t)(n ? n : 1) * sizeof(*t));

	if (!t)
		return;
	for (int i = 0; i < mm->maps.n; i++)
		t[k++] = (struct tagged){ &mm->maps.v[i], 0 };
	for (int i = 0; i < mm->maps_at_peak.n; i++)
		t[k++] = (struct tagged){ &mm->maps_at_peak.v[i], 1 };
	qsort(t, (size_t)n, sizeof(*t), by_id);
	for (int i = 0; i < n; i++) {
		struct replay_mapping *e;

		if (!l->n || l->v[l->n - 1].id != t[i].m->id) {
			if (!maps_grow(l))
				break;
			e = &l->v[l->n++];
			*e = *t[i].m;
			e->final = e->peak = (struct replay_map_figures){ 0 };
			e->gone = t[i].at_peak; /* no piece at the end */
		}
		e = &l->v[l->n - 1];
		if (t[i].at_peak) {
			fig_add(&e->peak, &t[i].m->final);
			continue;
		}
		if (t[i].m->start < e->start)
			e->start = t[i].m->start;
		if (t[i].m->end > e->end)
			e->end = t[i].m->end;
		fig_add(&e->final, &t[i].m->final);
	}
	free(t);
}

/*
 * Between two calls that free memory, a process's Anonymous only grows,
 * so the peak view taken before each such call (freeing) and at the end
 * holds the peak (within freeing's 1/64); except where a shrinker took memory from a process without a
 * call (the underused-THP shrinker, which frees zero-filled subpages of
 * its THPs, Linux 6.12+, or the deferred-split one).  Once one has split
 * a THP (thp_split_page), the samples take the view again whenever the
 * Anonymous grew by 1/64, so the peak is within that.
 */
static void mappings_tick(struct replay *r, uint64_t idx)
{
	uint64_t vm[THPS_NR_VM_ITEMS];

	(void)idx;
	thps_vmstat(r->m, vm);
	if (!vm[THPS_VM_thp_split_page])
		return;
	for (int i = 0; i < r->res->nmms; i++)
		if (!r->res->mms[i]->ended)
			take_peak(r->res->mms[i], 6);
}

static void mappings_mm_end(struct replay *r, struct replay_mm *mm)
{
	uint64_t rss;

	(void)r;
	take_figures(mm, &mm->other_final, 1);
	thps_proc_usage(mm->proc, &rss, NULL);
	if (rss && rss > mm->maps_peak_anon_kb) { /* the end is the peak */
		keep_as_peak(mm, rss);
		mm->other_peak = mm->other_final;
	}
	build_report(mm);
}

static void mappings_mm_free(struct replay_mm *mm)
{
	free(mm->maps.v);
	free(mm->maps_at_peak.v);
	free(mm->mappings.v);
	free(mm->vmas.v);
}

/* ---- the roll-up by kind ---- */
const char *replay_kind_row_name(int kind)
{
	return kind == REPLAY_NR_MAP_KINDS ? "file_copies" : replay_map_kind_name(kind);
}

const char *replay_kind_row_label(int kind)
{
	return kind == REPLAY_NR_MAP_KINDS ? "private file copies" : replay_map_kind_label(kind);
}

static int by_final_desc(const void *a, const void *b)
{
	const struct replay_kind_sum *x = a, *y = b;

	if (x->final.anon_kb != y->final.anon_kb)
		return x->final.anon_kb < y->final.anon_kb ? 1 : -1;
	if (x->peak.anon_kb != y->peak.anon_kb)
		return x->peak.anon_kb < y->peak.anon_kb ? 1 : -1;
	return x->kind - y->kind;
}

int replay_kind_sums(const struct replay_result *res, struct replay_kind_sum out[REPLAY_NR_KIND_ROWS])
{
	for (int k = 0; k < REPLAY_NR_KIND_ROWS; k++)
		out[k] = (struct replay_kind_sum){ .kind = k };
	for (int i = 0; i < res->nmms; i++) {
		const struct replay_mm *mm = res->mms[i];

		for (int k = 0; k < mm->mappings.n; k++) {
			struct replay_kind_sum *s = &out[mm->mappings.v[k].kind];

			s->mappings += !mm->mappings.v[k].gone;
			fig_add(&s->final, &mm->mappings.v[k].final);
			fig_add(&s->peak, &mm->mappings.v[k].peak);
		}
		fig_add(&out[REPLAY_MAP_other].final, &mm->other_final);
		fig_add(&out[REPLAY_MAP_other].peak, &mm->other_peak);
		out[REPLAY_NR_MAP_KINDS].final.anon_kb += mm->final_file_cow_kb;
	}
	qsort(out, REPLAY_NR_KIND_ROWS, sizeof(*out), by_final_desc);
	return REPLAY_NR_KIND_ROWS;
}

/* ---- output ---- */
static void json_figures(struct json *j, const char *key, const struct replay_map_figures *f)
{
	json_begin_object(j, key);
	json_uint(j, "Anonymous", f->anon_kb);
	json_uint(j, "AnonHugePages", f->anon_huge_kb);
	json_end_object(j);
}

static const char *advice_name(int advice)
{
	return advice == LINUX_MADV_HUGEPAGE     ? "hugepage"
	       : advice == LINUX_MADV_NOHUGEPAGE ? "nohugepage"
						 : "none";
}

static void json_mapping(struct json *j, const struct replay_mapping *m)
{
	char prot[4] = { m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-', m->prot & 4 ? 'x' : '-', 0 };

	json_begin_object(j, NULL);
	json_uint(j, "start", m->start);
	json_uint(j, "end", m->end);
	json_string(j, "kind", replay_map_kind_name(m->kind));
	json_string(j, "origin", m->call);
	if (m->caller)
		json_string(j, "caller", m->caller);
	json_double(j, "origin_s", (double)m->t_ns * 1e-9);
	json_uint(j, "origin_length", m->len0);
	json_string(j, "prot", prot);
	json_uint(j, "flags", (uint64_t)(unsigned)m->flags);
	json_string(j, "madvise", advice_name(m->advice));
	json_bool(j, "unmapped_before_end", m->gone);
	json_figures(j, "final", &m->final);
	json_figures(j, "peak", &m->peak);
	json_end_object(j);
}

static void mappings_json_mm(struct json *j, const struct replay_mm *mm)
{
	json_begin_array(j, "mappings");
	for (int k = 0; k < mm->mappings.n; k++)
		json_mapping(j, &mm->mappings.v[k]);
	json_end_array(j);
	json_begin_object(j, "mappings_other");
	json_figures(j, "final", &mm->other_final);
	json_figures(j, "peak", &mm->other_peak);
	json_end_object(j);
	/* the model's VMAs at the end, as smaps lists the kernel's */
	json_begin_array(j, "vmas");
	for (int k = 0; k < mm->vmas.n; k++) {
		json_begin_object(j, NULL);
		json_uint(j, "start", mm->vmas.v[k].start);
		json_uint(j, "end", mm->vmas.v[k].end);
		json_uint(j, "Anonymous", mm->vmas.v[k].final.anon_kb);
		json_uint(j, "AnonHugePages", mm->vmas.v[k].final.anon_huge_kb);
		json_end_object(j);
	}
	json_end_array(j);
}

static void callers_json(struct json *j, const struct replay_result *res);

static void mappings_json(struct json *j, const struct replay_result *res)
{
	struct replay_kind_sum s[REPLAY_NR_KIND_ROWS];
	int n = replay_kind_sums(res, s);

	json_begin_array(j, "mapping_kinds");
	for (int i = 0; i < n; i++) {
		json_begin_object(j, NULL);
		json_string(j, "kind", replay_kind_row_name(s[i].kind));
		json_uint(j, "mappings", s[i].mappings);
		json_figures(j, "final", &s[i].final);
		json_figures(j, "peak", &s[i].peak);
		json_end_object(j);
	}
	json_end_array(j);
	callers_json(j, res);
}

/*
 * The rollup by call site, when the trace has CALLER records: each
 * distinct chain's mappings summed over the processes, the biggest final
 * Anonymous first: res->ncallers rows, or NULL for a trace recorded
 * without --callers (and when out of memory: the rollup is left out).
 */
struct caller_sum {
	const char *caller;
	uint64_t mappings;
	struct replay_map_figures final, peak;
};

static int by_caller_final_desc(const void *a, const void *b)
{
	const struct caller_sum *x = a, *y = b;

	if (x->final.anon_kb != y->final.anon_kb)
		return x->final.anon_kb < y->final.anon_kb ? 1 : -1;
	return strcmp(x->caller, y->caller);
}

static struct caller_sum *caller_sums(const struct replay_result *res)
{
	struct caller_sum *s;

	if (!res->ncallers)
		return NULL;
	s = calloc((size_t)res->ncallers, sizeof(*s));
	if (!s)
		return NULL;
	for (int i = 0; i < res->ncallers; i++)
		s[i].caller = res->callers[i];
	for (int p = 0; p < res->nmms; p++) {
		const struct replay_mm *mm = res->mms[p];

		for (int k = 0; k < mm->mappings.n; k++) {
			const struct replay_mapping *m = &mm->mappings.v[k];

			for (int i = 0; m->caller && i < res->ncallers; i++)
				if (s[i].caller == m->caller) {
					s[i].mappings++;
					fig_add(&s[i].final, &m->final);
					fig_add(&s[i].peak, &m->peak);
					break;
				}
		}
	}
	qsort(s, (size_t)res->ncallers, sizeof(*s), by_caller_final_desc);
	return s;
}

static void callers_json(struct json *j, const struct replay_result *res)
{
	struct caller_sum *s = caller_sums(res);

	if (!s)
		return;
	json_begin_array(j, "mapping_callers");
	for (int i = 0; i < res->ncallers; i++) {
		json_begin_object(j, NULL);
		json_string(j, "caller", s[i].caller);
		json_uint(j, "mappings", s[i].mappings);
		json_figures(j, "final", &s[i].final);
		json_figures(j, "peak", &s[i].peak);
		json_end_object(j);
	}
	json_end_array(j);
	free(s);
}

static void callers_text(FILE *f, const struct replay_result *res)
{
	struct caller_sum *s = caller_sums(res);

	if (!s)
		return;
	fprintf(f, "\nwhere the memory is, by the call that made the mapping (record --callers):\n");
	fprintf(f, "  %8s %14s %14s %14s  %s\n", "mappings", "Anonymous kB", "AnonHuge kB",
		"peak Anon kB", "caller");
	for (int i = 0; i < res->ncallers; i++)
		if (s[i].mappings)
			fprintf(f, "  %8llu %14llu %14llu %14llu  %s\n",
				(unsigned long long)s[i].mappings,
				(unsigned long long)s[i].final.anon_kb,
				(unsigned long long)s[i].final.anon_huge_kb,
				(unsigned long long)s[i].peak.anon_kb, s[i].caller);
	free(s);
}

static void mappings_text(FILE *f, const struct replay_result *res)
{
	struct replay_kind_sum s[REPLAY_NR_KIND_ROWS];
	int n = replay_kind_sums(res, s);

	fprintf(f, "\nwhere the memory is, by kind of mapping (summed over the processes; final "
		   "at each one's end,\npeak at each one's highest Anonymous):\n");
	fprintf(f, "  %-20s %8s %14s %14s %14s %14s\n", "kind", "mappings", "Anonymous kB",
		"AnonHuge kB", "peak Anon kB", "peak AHP kB");
	for (int i = 0; i < n; i++) {
		if (!s[i].mappings && !s[i].final.anon_kb && !s[i].peak.anon_kb)
			continue;
		fprintf(f, "  %-20s %8llu %14llu %14llu %14llu %14llu\n",
			replay_kind_row_label(s[i].kind), (unsigned long long)s[i].mappings,
			(unsigned long long)s[i].final.anon_kb,
			(unsigned long long)s[i].final.anon_huge_kb,
			(unsigned long long)s[i].peak.anon_kb,
			(unsigned long long)s[i].peak.anon_huge_kb);
	}
	callers_text(f, res);
}

const struct replay_measure measure_mappings = {
	.name = "mappings",
	.freeing = mappings_freeing,
	.mapping = mappings_mapping,
	.fork = mappings_fork,
	.tick = mappings_tick,
	.mm_end = mappings_mm_end,
	.mm_free = mappings_mm_free,
	.json_mm = mappings_json_mm,
	.json = mappings_json,
	.text = mappings_text,
};
