/*
 * layout.c - a trace replayed under another address layout (engine.h).
 *
 * With address randomisation on, Linux places each exec's memory at new
 * addresses: the executable (a PIE) at a random page, the heap at a random
 * page above the bss (arch_randomize_brk), the mmap base and the stack at
 * random pages (arch_mmap_rnd, randomize_stack_top).  Within each of these
 * regions the layout is what the program's calls made of it, relative to
 * the region's start.  What THP cares about is where each mapping falls
 * within 2 MiB (and within the mTHP sizes): how many aligned 2 MiB blocks
 * fit in it, which pages share a block.  So a layout is four shifts by
 * whole pages within 2 MiB, one per region, and the replay makes every
 * call and every fault at its address shifted by its region's:
 *
 *   exe    the executable's mappings and its bss (below the heap); none
 *          for an executable that is not position-independent (one below
 *          4 GiB: its addresses are in the ELF file);
 *   brk    the heap: the exe's shift plus a page offset of its own;
 *   mmap   every mapping an mmap or a moving mremap placed (top-down from
 *          the mmap base: shifted down), and what exec mapped above the
 *          heap (ld.so, the vdso);
 *   stack  the main stack and the room it may grow into (shifted down).
 *
 * Two exceptions, as the kernel has them.  A mapping the kernel aligns to
 * 2 MiB (thpsim/anon_thp_align: since 6.7, anonymous mmaps without an
 * address hint of 2 MiB or more, since 6.12 of a multiple of 2 MiB) is
 * placed at a 2 MiB boundary whatever the base.  A mapping at an address
 * the program asked for (MAP_FIXED, or a hint the kernel took) is where
 * the program said: inside a range it mapped before (ld.so's segments in
 * their reservation, Go's arena chunks), it moves with that range; in
 * free space (Go's heap hints at 0xc000000000), it stays.
 *
 * The addresses of the trace are translated by a table per address space
 * (struct replay_xlat): recorded ranges, each with its shift, as the
 * recorded mappings were made; the model and the measures see only the
 * translated addresses.  Where a shifted mapping would land on one
 * already there (an aligned mapping pushed against its neighbour), it
 * goes 2 MiB lower, as the kernel's top-down search would put it below;
 * the kernel's exact gaps near aligned mappings may differ by less than
 * 2 MiB, which changes only whether two such mappings merge.
 *
 * Layout 0 is the recorded one (no table, no cost); the others are drawn
 * from a seed and their number, so a replay is reproducible.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "trace/linux_abi.h"

#define PMD (2ULL << 20)
#define PAGE 4096ULL
#define PAGE_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))
#define STEPS_DOWN 64                      /* 2 MiB steps a placement may take */
#define MAX_SHIFT ((STEPS_DOWN + 4) * PMD) /* bounds every shift */
#define STACK_ROOM (128ULL << 20)          /* the stack's growth kept with it */
#define NON_PIE_BELOW (4ULL << 30)

struct xlat_ent {
	uint64_t start, end; /* recorded addresses */
	int64_t delta;       /* translated = recorded + delta */
	uint32_t probed;     /* layout 0's probe: the call count when found no THP */
	uint8_t tag;         /* the region whose shift moves it within 2 MiB (0: none) */
};

struct replay_xlat {
	struct xlat_ent *v;
	int n, cap;
	int hit; /* the entry found last */
};

/* ---- drawing a layout ---- */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void replay_layout_shifts(uint64_t seed, int k, int64_t heap, int64_t mmap,
			  struct replay_shifts *d)
{
	uint64_t s = seed * 0x100000001b3ULL + (uint64_t)k;

	memset(d, 0, sizeof(*d));
	if (k == 0)
		return; /* the recorded layout */
	d->exe = (int64_t)(splitmix(&s) % 512 * PAGE);
	d->brk = d->exe + (int64_t)(splitmix(&s) % 512 * PAGE);
	if (heap >= 0) { /* chosen for its class (ranges.c): above the exe's */
		int64_t u = (heap - d->exe) % (int64_t)PMD;

		d->brk = d->exe + (u < 0 ? u + (int64_t)PMD : u);
	}
	d->mmap = -(int64_t)(splitmix(&s) % 512 * PAGE);
	if (mmap >= 0) /* chosen for its class (ranges.c): that far down */
		d->mmap = -(mmap % (int64_t)PMD);
	d->stack = -(int64_t)(splitmix(&s) % 512 * PAGE);
}

static void layout_draw(uint64_t seed, int k, int64_t heap, int64_t mmap, struct replay_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->index = k;
	l->on = k != 0;
	replay_layout_shifts(seed, k, heap, mmap, &l->d);
}

/*
 * The mmap base's classes (ranges.c), as the heap's: under the recorded
 * layout, each boundary of the anonymous memory the mmap base places (a
 * mapping's start and end, the ends of a munmap, mprotect or madvise in
 * it; file mappings hold no memory of the model's) marks where
 * the figures may change as the base moves down a page at a time.  At the
 * shift that puts a boundary on 2 MiB, a mapping that starts there gains
 * its first block whole; one page further, one that ends there loses its
 * last.  A boundary is both (the VMAs below and above it), so both shifts
 * are marked.  A mapping the kernel aligns in other layouts but that was
 * recorded off a boundary has figures no class says: then there are no
 * classes (mmap_unclassed).
 */
static void mmap_break(struct replay *r, uint64_t b)
{
	uint64_t page = PAGE_UP(b) / PAGE;

	if (r->layout.probe) {
		r->res->mmap_breaks[page % REPLAY_HEAP_OFFSETS] = 1;
		r->res->mmap_breaks[(page + 1) % REPLAY_HEAP_OFFSETS] = 1;
	}
}

static void mmap_breaks(struct replay *r, uint64_t start, uint64_t end, int tag)
{
	if (tag == REPLAY_REGION_MMAP) {
		mmap_break(r, start);
		mmap_break(r, end);
	}
}

/* ---- the table ---- */
static struct replay_xlat *xlat_new(void)
{
	return calloc(1, sizeof(struct replay_xlat));
}

void xlat_free(struct replay_xlat *x)
{
	if (x) {
		free(x->v);
		free(x);
	}
}

static struct replay_xlat *xlat_copy(const struct replay_xlat *from)
{
	struct replay_xlat *x = xlat_new();

	if (!x || !from || !from->n)
		return x;
	x->v = malloc((size_t)from->n * sizeof(*x->v));
	if (!x->v) {
		free(x);
		return NULL;
	}
	memcpy(x->v, from->v, (size_t)from->n * sizeof(*x->v));
	x->n = x->cap = from->n;
	return x;
}

/* The first entry ending above a. */
static int first_above(const struct replay_xlat *x, uint64_t a)
{
	int lo = 0, hi = x->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (x->v[mid].end > a)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int grow(struct replay_xlat *x, int more)
{
	if (x->n + more > x->cap) {
		int cap = x->cap ? x->cap * 2 : 32;
		struct xlat_ent *v;

		while (cap < x->n + more)
			cap *= 2;
		v = realloc(x->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	return 0;
}

/* Forget [start, end): entries are cut around it. */
static void xlat_clear(struct replay_xlat *x, uint64_t start, uint64_t end)
{
	int i = first_above(x, start), j;

	if (start >= end || i == x->n || x->v[i].start >= end)
		return;
	if (x->v[i].start < start && x->v[i].end > end) { /* a hole in one entry */
		if (grow(x, 1))
			return;
		memmove(&x->v[i + 1], &x->v[i], (size_t)(x->n - i) * sizeof(*x->v));
		x->n++;
		x->v[i].end = start;
		x->v[i + 1].start = end;
		return;
	}
	if (x->v[i].start < start) {
		x->v[i].end = start;
		i++;
	}
	for (j = i; j < x->n && x->v[j].end <= end; j++)
		;
	if (j < x->n && x->v[j].start < end)
		x->v[j].start = end;
	memmove(&x->v[i], &x->v[j], (size_t)(x->n - j) * sizeof(*x->v));
	x->n -= j - i;
	x->hit = 0;
}

/* [start, end) is translated by delta from now on, moved within 2 MiB by
 * the shift of region tag. */
static void xlat_set(struct replay_xlat *x, uint64_t start, uint64_t end, int64_t delta, int tag)
{
	int i;

	if (start >= end)
		return;
	xlat_clear(x, start, end);
	if (grow(x, 1))
		return;
	i = first_above(x, start);
	/* joins a neighbour with the same shift */
	if (i > 0 && x->v[i - 1].end == start && x->v[i - 1].delta == delta && x->v[i - 1].tag == tag) {
		x->v[i - 1].end = end;
		if (i < x->n && x->v[i].start == end && x->v[i].delta == delta && x->v[i].tag == tag) {
			x->v[i - 1].end = x->v[i].end;
			memmove(&x->v[i], &x->v[i + 1], (size_t)(x->n - i - 1) * sizeof(*x->v));
			x->n--;
		}
		return;
	}
	if (i < x->n && x->v[i].start == end && x->v[i].delta == delta && x->v[i].tag == tag) {
		x->v[i].start = start;
		return;
	}
	memmove(&x->v[i + 1], &x->v[i], (size_t)(x->n - i) * sizeof(*x->v));
	x->v[i] = (struct xlat_ent){ start, end, delta, 0, (uint8_t)tag };
	x->n++;
}

/* Fill the parts of [start, end) no entry holds. */
static void xlat_fill(struct replay_xlat *x, uint64_t start, uint64_t end, int64_t delta, int tag)
{
	uint64_t a = start;

	while (a < end) {
		int i = first_above(x, a);
		uint64_t stop = i < x->n && x->v[i].start < end ? x->v[i].start : end;

		if (stop > a)
			xlat_set(x, a, stop, delta, tag);
		if (i >= x->n || x->v[i].start >= end)
			break;
		a = x->v[i].end;
	}
}

/* The entry whose shift applies at recorded address a: the one holding
 * it (kept as the next lookup's first guess); in a gap, its nearest
 * neighbour (below, else above); -1 when the table is empty. */
static int xlat_index(struct replay_xlat *x, uint64_t a)
{
	int i;

	if (x->hit < x->n && x->v[x->hit].start <= a && a < x->v[x->hit].end)
		return x->hit;
	i = first_above(x, a);
	if (i < x->n && x->v[i].start <= a)
		return x->hit = i;
	return i > 0 ? i - 1 : i < x->n ? i : -1;
}

/* The shift at recorded address a (xlat_index's entry's; none: 0), and
 * where it stops applying (*limit): the entry's end, or in a gap the next
 * entry's start. */
int64_t xlat_at(struct replay_xlat *x, uint64_t a, uint64_t *limit)
{
	int i = xlat_index(x, a);

	if (i < 0) {
		*limit = UINT64_MAX;
		return 0;
	}
	if (x->v[i].start <= a && a < x->v[i].end)
		*limit = x->v[i].end;
	else if (x->v[i].start > a) /* the neighbour above: the gap ends there */
		*limit = x->v[i].start;
	else
		*limit = i + 1 < x->n ? x->v[i + 1].start : UINT64_MAX;
	return x->v[i].delta;
}

/* The region tag at recorded address a. */
static int xlat_tag(struct replay_xlat *x, uint64_t a)
{
	int i = xlat_index(x, a);

	return i < 0 ? 0 : x->v[i].tag;
}

/* Is [s, e), translated, clear of every entry's translated range? */
static int xlat_room(const struct replay_xlat *x, uint64_t s, uint64_t e)
{
	for (int i = first_above(x, s > MAX_SHIFT ? s - MAX_SHIFT : 0);
	     i < x->n && x->v[i].start < e + MAX_SHIFT; i++) {
		uint64_t ts = x->v[i].start + (uint64_t)x->v[i].delta;
		uint64_t te = x->v[i].end + (uint64_t)x->v[i].delta;

		if (ts < e && s < te)
			return 0;
	}
	return 1;
}

/* ---- placing what the kernel placed ---- */

/* The kernel refused the call (an errno for a result): nothing was mapped. */
static int call_failed(const struct trace_event *ev)
{
	return ev->ret < 0 && ev->ret > -4096;
}

/* Would the kernel put an mmap of len bytes, with no address asked, on a
 * 2 MiB boundary?  (thpsim/anon_thp_align, read once per replay) */
static int aligned_by_kernel(const struct replay *r, uint64_t len, int anon)
{
	if (!anon)
		return 0;
	switch (r->layout.align) {
	case 1: /* pmd-or-larger */
		return len >= PMD;
	case 2: /* pmd-multiple */
		return len && len % PMD == 0;
	default:
		return 0;
	}
}

/* The shift for a mapping of len bytes the kernel placed at recorded
 * address at, top-down from the mmap base: the mmap region's, or to the
 * 2 MiB boundary at or above for one the kernel aligns, and 2 MiB lower
 * while it would overlap a mapping already there. */
static int64_t place(struct replay *r, struct replay_xlat *x, uint64_t at, uint64_t len, int align)
{
	uint64_t first = at + (uint64_t)r->layout.d.mmap, want;

	if (r->layout.probe)
		return 0; /* layout 0 probed: the recorded place */
	len = PAGE_UP(len);
	if (align)
		first = (first + PMD - 1) & ~(PMD - 1);
	want = first;
	for (int step = 0; step <= STEPS_DOWN && want > PMD; step++, want -= PMD)
		if (xlat_room(x, want, want + len))
			return (int64_t)(want - at);
	if (!r->layout.crowded_noted) {
		r->layout.crowded_noted = 1;
		replay_note(r, "layout %d: a mapping found no free place near its shifted address; "
			    "it overlaps another", r->layout.index);
	}
	return (int64_t)(first - at);
}

/* ---- exec, fork ---- */
void layout_exec(struct replay *r, struct replay_mm *mm, struct trace_event *ev)
{
	xlat_free(mm->xlat);
	mm->xlat = xlat_new();
	mm->start_brk_rec = ev->start_brk;
	/* an executable that is not a PIE stays (its heap still moves) */
	mm->exe_delta = ev->start_brk && ev->start_brk < NON_PIE_BELOW ? 0 : r->layout.d.exe;
	mm->brk_delta = r->layout.d.brk;
	mm->heap_end_rec = PAGE_UP(ev->brk);
	if (ev->start_brk) {
		ev->start_brk += (uint64_t)mm->brk_delta;
		ev->brk += (uint64_t)mm->brk_delta;
	}
}

void layout_fork(struct replay_mm *parent, struct replay_mm *child)
{
	child->xlat = xlat_copy(parent->xlat);
	child->start_brk_rec = parent->start_brk_rec;
	child->exe_delta = parent->exe_delta;
	child->brk_delta = parent->brk_delta;
	child->heap_end_rec = parent->heap_end_rec;
}

/* An exec's VMA: by its region. */
void layout_vma(struct replay *r, struct replay_mm *mm, struct trace_event *ev)
{
	int64_t d;
	int tag;

	if (!mm->xlat || ev->addr + ev->len > (1ULL << 47))
		return;
	if (ev->kind == TRACE_VMA_HEAP) {
		d = mm->brk_delta;
		tag = REPLAY_REGION_BRK;
		if (ev->addr + ev->len > mm->heap_end_rec)
			mm->heap_end_rec = ev->addr + ev->len;
	} else if (ev->kind == TRACE_VMA_STACK) {
		d = r->layout.d.stack;
		tag = REPLAY_REGION_STACK;
	} else if (mm->start_brk_rec && ev->addr < mm->start_brk_rec) {
		d = mm->exe_delta;
		tag = mm->start_brk_rec < NON_PIE_BELOW ? 0 : REPLAY_REGION_EXE;
	} else {
		d = r->layout.d.mmap;
		tag = REPLAY_REGION_MMAP;
	}
	xlat_set(mm->xlat, ev->addr, ev->addr + ev->len, d, tag);
	if (ev->kind == TRACE_VMA_ANON)
		mmap_breaks(r, ev->addr, ev->addr + ev->len, tag);
	if (ev->kind == TRACE_VMA_STACK && ev->addr > STACK_ROOM)
		xlat_fill(mm->xlat, ev->addr - STACK_ROOM, ev->addr, d, tag);
	ev->addr += (uint64_t)d;
}

/* ---- the calls ---- */

static void syscall_one(struct replay *r, struct trace_event *e)
{
	replay_syscall(r, e);
}

/*
 * Layout 0's probe (replay_opts.layout_probe): the recorded layout, each
 * entry of the table tagged with the region whose shift would move it
 * within 2 MiB (exe, brk, mmap, stack; none for what the kernel puts on a
 * 2 MiB boundary in every layout, or what stays where it was recorded).
 * A fault or a kernel touch in a tagged entry whose VMA could hold a folio
 * larger than a page (thps_thp_possible) makes the region's shift one that
 * can change the figures (layout.sensitive), and so does MADV_HUGEPAGE or
 * MADV_COLLAPSE on it.  Each entry is asked once between two calls (a
 * call can change what its VMA allows).  What no shift can change, no
 * other layout is run for (ranges.c).  Page tables, of which a shift can
 * add or save one per mapping, are not counted as a change.
 */
static void probe_at(struct replay *r, struct replay_mm *mm, uint64_t a, int always)
{
	int i = xlat_index(mm->xlat, a);
	struct xlat_ent *e;

	if (i < 0)
		return;
	e = &mm->xlat->v[i];
	if (!(e->tag & ~r->layout.sensitive) || e->probed == r->layout.gen)
		return;
	if (always || thps_thp_possible(mm->proc, a))
		r->layout.sensitive |= e->tag;
	else
		e->probed = r->layout.gen;
}

void layout_probe(struct replay *r, uint64_t a)
{
	if (r->cur && r->cur->xlat && r->cur->proc)
		probe_at(r, r->cur, a, 0);
}

static void touch_one(struct replay *r, struct trace_event *e)
{
	e->addr = e->args[0];
	e->len = e->args[1];
	replay_touch(r, e);
}

/* Make ev's call once for each piece of [a, a+len) (args[0], args[1])
 * with one shift. */
static void by_pieces(struct replay *r, struct replay_mm *mm, const struct trace_event *ev,
		      void (*make)(struct replay *, struct trace_event *))
{
	uint64_t a = ev->args[0], end = a + PAGE_UP(ev->args[1]);
	int pieces = 0;
	struct trace_event *e = &r->layout.scratch;

	if (end <= a) {
		memcpy(e, ev, offsetof(struct trace_event, name));
		make(r, e);
		return;
	}
	while (a < end) {
		uint64_t limit;
		int64_t d = xlat_at(mm->xlat, a, &limit);

		if (limit > end)
			limit = end;
		memcpy(e, ev, offsetof(struct trace_event, name));
		e->args[0] = a + (uint64_t)d;
		e->args[1] = limit - a;
		if (__builtin_expect(r->layout.probe, 0) && mm->proc) {
			if (make == touch_one)
				probe_at(r, mm, a, 0);
			else if (ev->nr == LINUX_NR_madvise && (ev->args[2] == LINUX_MADV_HUGEPAGE ||
								ev->args[2] == LINUX_MADV_COLLAPSE))
				probe_at(r, mm, a, 1);
		}
		if (__builtin_expect(r->layout.probe, 0) && make != touch_one &&
		    xlat_tag(mm->xlat, a) == REPLAY_REGION_MMAP) {
			if (!foreign_is(mm, a)) /* the model holds anonymous memory alone */
				mmap_break(r, a);
			if (!foreign_is(mm, limit - 1))
				mmap_break(r, limit);
		}
		if (pieces++)
			r->res->syscalls--; /* one call, made in pieces */
		make(r, e);
		a = limit;
	}
}

static void sys_mmap(struct replay *r, struct replay_mm *mm, struct trace_event *ev)
{
	uint64_t at = (uint64_t)ev->ret, len = PAGE_UP(ev->args[1]), limit;
	int flags = (int)ev->args[3];
	int anon = (flags & LINUX_MAP_ANONYMOUS) && (flags & LINUX_MAP_TYPE) == LINUX_MAP_PRIVATE;
	int64_t d;
	int tag;

	if (call_failed(ev))
		return;
	if (flags & (LINUX_MAP_FIXED | LINUX_MAP_FIXED_NOREPLACE)) {
		d = xlat_at(mm->xlat, at, &limit); /* where the program's range went */
		tag = xlat_tag(mm->xlat, at);
		xlat_fill(mm->xlat, at, at + len, d, tag);
		mmap_breaks(r, at, at + len, anon ? tag : 0);
	} else if (ev->args[0] && (ev->args[0] & ~(PAGE - 1)) == at) {
		/* the kernel took the hint: inside or beside a range the
		 * program has, it moves with it; in free space, it stays */
		int i = first_above(mm->xlat, at ? at - 1 : 0);
		int near = i < mm->xlat->n && mm->xlat->v[i].start <= at + len;

		d = near ? mm->xlat->v[i].delta : 0;
		tag = near ? mm->xlat->v[i].tag : 0;
		xlat_set(mm->xlat, at, at + len, d, tag);
		mmap_breaks(r, at, at + len, anon ? tag : 0);
	} else {
		int align = !ev->args[0] && aligned_by_kernel(r, len, anon);

		d = place(r, mm->xlat, at, len, align);
		tag = align && !(at & (PMD - 1)) ? 0 : REPLAY_REGION_MMAP;
		xlat_set(mm->xlat, at, at + len, d, tag);
		mmap_breaks(r, at, at + len, anon ? tag : 0);
		if (align && tag && r->layout.probe)
			r->res->mmap_unclassed = 1;
	}
	ev->ret += d;
	if (flags & (LINUX_MAP_FIXED | LINUX_MAP_FIXED_NOREPLACE))
		ev->args[0] += (uint64_t)d;
}

static void sys_mremap(struct replay *r, struct replay_mm *mm, struct trace_event *ev)
{
	uint64_t old = ev->args[0], old_len = PAGE_UP(ev->args[1]), new_len = PAGE_UP(ev->args[2]);
	uint64_t to = (uint64_t)ev->ret, limit;
	int flags = (int)ev->args[3];
	int64_t d_old = xlat_at(mm->xlat, old, &limit), d_new;
	int tag, anon;

	if (call_failed(ev))
		return;
	if (to == old) {
		d_new = d_old;
		tag = xlat_tag(mm->xlat, old);
	} else if (flags & 2) { /* MREMAP_FIXED: where the program said */
		d_new = xlat_at(mm->xlat, to, &limit);
		tag = xlat_tag(mm->xlat, to);
	} else {
		int align = !foreign_is(mm, old + (uint64_t)d_old) && aligned_by_kernel(r, new_len, 1);

		d_new = place(r, mm->xlat, to, new_len, align);
		tag = align && !(to & (PMD - 1)) ? 0 : REPLAY_REGION_MMAP;
		if (align && tag && r->layout.probe)
			r->res->mmap_unclassed = 1;
	}
	anon = !foreign_is(mm, old + (uint64_t)d_old);
	mmap_breaks(r, old, old + old_len, anon ? xlat_tag(mm->xlat, old) : 0);
	if (!(flags & 4)) /* without MREMAP_DONTUNMAP the old range goes */
		xlat_clear(mm->xlat, old, old + old_len);
	xlat_set(mm->xlat, to, to + new_len, d_new, tag);
	mmap_breaks(r, to, to + new_len, anon ? tag : 0);
	ev->args[0] += (uint64_t)d_old;
	ev->ret += d_new;
	if (flags & 2)
		ev->args[4] += (uint64_t)d_new;
}

void layout_syscall(struct replay *r, struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;

	if (!mm || !mm->xlat) {
		replay_syscall(r, ev);
		return;
	}
	r->layout.gen++; /* what a VMA allows may change */
	switch (ev->nr) {
	case LINUX_NR_mmap:
		sys_mmap(r, mm, ev);
		break;
	case LINUX_NR_mremap:
		sys_mremap(r, mm, ev);
		break;
	case LINUX_NR_brk:
		if (ev->args[0])
			ev->args[0] += (uint64_t)mm->brk_delta;
		if (ev->ret > 0) {
			if (ev->args[0] && PAGE_UP((uint64_t)ev->ret) > mm->heap_end_rec) {
				xlat_set(mm->xlat, mm->heap_end_rec, PAGE_UP((uint64_t)ev->ret),
					 mm->brk_delta, REPLAY_REGION_BRK);
				mm->heap_end_rec = PAGE_UP((uint64_t)ev->ret);
			}
			ev->ret += mm->brk_delta;
		}
		break;
	case LINUX_NR_munmap:
	case LINUX_NR_mprotect:
	case LINUX_NR_pkey_mprotect:
	case LINUX_NR_madvise:
		by_pieces(r, mm, ev, syscall_one);
		if (ev->nr == LINUX_NR_munmap && !call_failed(ev))
			xlat_clear(mm->xlat, ev->args[0], ev->args[0] + PAGE_UP(ev->args[1]));
		return;
	default:
		break;
	}
	replay_syscall(r, ev);
}

void layout_touch(struct replay *r, struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;

	if (!mm || !mm->xlat) {
		replay_touch(r, ev);
		return;
	}
	ev->args[0] = ev->addr;
	ev->args[1] = ev->len;
	by_pieces(r, mm, ev, touch_one);
}

/* Which mappings the kernel aligns, from the profile in force. */
void layout_begin(struct replay *r, uint64_t seed, int k)
{
	char v[32] = "";

	layout_draw(seed, k, r->o->heap_chosen ? r->o->heap_shift : -1,
		    r->o->mmap_chosen ? r->o->mmap_shift : -1, &r->layout);
	if (!k && r->o->layout_probe) {
		r->layout.probe = r->layout.on = 1; /* every shift 0 */
		r->layout.gen = 1;
	}
	thps_knob_get(r->m, "thpsim/anon_thp_align", v, sizeof(v));
	r->layout.align = !strcmp(v, "pmd-or-larger") ? 1 : !strcmp(v, "pmd-multiple") ? 2 : 0;
}
