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
#include <stdbool.h>
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

struct pair {
	uint64_t v;
	double w;
};

static int cmp_pair(const void *a, const void *b)
{
	return cmp_u64(&((const struct pair *)a)->v, &((const struct pair *)b)->v);
}

void replay_spread_weighted(const uint64_t *v, const double *w, int n, uint64_t out[3])
{
	struct pair *p;
	double total = 0, acc = 0;

	if (!w || n <= 0 || !(p = malloc((size_t)n * sizeof(*p)))) {
		replay_spread(v, n, out);
		return;
	}
	for (int i = 0; i < n; i++) {
		p[i] = (struct pair){ v[i], w[i] };
		total += w[i];
	}
	qsort(p, (size_t)n, sizeof(*p), cmp_pair);
	out[0] = p[0].v;
	out[2] = p[n - 1].v;
	out[1] = p[n - 1].v;
	for (int i = 0; i < n; i++) {
		acc += p[i].w;
		if (acc >= total / 2) {
			out[1] = p[i].v;
			break;
		}
	}
	free(p);
}

/*
 * The classes of a region's place (the heap's, the mmap base's).  Its
 * shift is a page offset within 2 MiB (HEAP_OFFSETS of them); a boundary
 * the trace recorded at address b sits on a 2 MiB boundary under one of
 * them, and a mapping that begins there gains or loses its first block
 * whole there or one page on (res->heap_breaks and res->mmap_breaks,
 * marked by layout 0's replay: records.c, layout.c); between two marked
 * offsets every shift gives the same blocks, so the same THPs (where the
 * program touches the blocks it could have alike: it is not checked
 * fault by fault).
 */
#define HEAP_OFFSETS REPLAY_HEAP_OFFSETS

/* The class of heap offset o: the break at or below it (circularly). */
static int heap_class(const uint8_t *breaks, int o)
{
	for (int i = 0; i < HEAP_OFFSETS; i++) {
		int c = (o - i + HEAP_OFFSETS) % HEAP_OFFSETS;

		if (breaks[c])
			return c;
	}
	return 0;
}

static int class_len(const uint8_t *breaks, int c)
{
	int l = 1;

	while (l < HEAP_OFFSETS && !breaks[(c + l) % HEAP_OFFSETS])
		l++;
	return l;
}

/*
 * Under a memory limit, or a machine given its free blocks, a page table
 * more or less (which a shift can make, a page per mapping) can decide a
 * fallback or a kill: there every layout is run whatever the probe found.
 */
static int under_pressure(const struct replay_opts *o, const struct replay_result *res)
{
	return res->limited || o->nfree_blocks > 0;
}

static int count_classes(const uint8_t *breaks)
{
	int classes = 0;

	for (int c = 0; c < HEAP_OFFSETS; c++)
		classes += breaks[c] != 0;
	return classes;
}

/*
 * Each layout's shift of one region (the heap's, or the mmap base's) and
 * weight, from that region's breaks.  Where there are fewer classes than
 * layouts, every class gets one (a page within it drawn from the seed),
 * so that the rare places are seen; the layouts left over, and layout 0
 * (the recorded place, offset 0), stand where they fall; each layout
 * weighs its class's share of the offsets divided among the layouts in
 * it.  Otherwise the drawn shifts stand (shift -1) and weigh alike.  The
 * number of classes.
 */
static int class_plan(const uint8_t *breaks, int n, uint64_t s, int64_t *shift, double *w)
{
	int classes = count_classes(breaks), cls[HEAP_OFFSETS], in[HEAP_OFFSETS] = { 0 }, next = 0;

	for (int k = 0; k < n; k++) {
		w[k] = 1.0 / n;
		shift[k] = -1;
	}
	if (!classes || classes > n - 1)
		return classes;
	for (int c = 0; c < HEAP_OFFSETS; c++)
		if (breaks[c])
			cls[next++] = c;
	for (int k = 1; k < n; k++) {
		int c = k - 1 < classes ? cls[k - 1] : -1, o;

		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		if (c >= 0)
			o = (c + (int)((s >> 33) % (uint64_t)class_len(breaks, c))) % HEAP_OFFSETS;
		else
			o = (int)((s >> 33) % HEAP_OFFSETS);
		shift[k] = (int64_t)o * 4096;
	}
	shift[0] = 0;
	for (int k = 0; k < n; k++)
		in[heap_class(breaks, (int)(shift[k] / 4096))]++;
	for (int k = 0; k < n; k++) {
		int c = heap_class(breaks, (int)(shift[k] / 4096));

		w[k] = (double)class_len(breaks, c) / HEAP_OFFSETS / in[c];
	}
	return classes;
}

/*
 * How many layouts to run for n asked: where the region that matters has
 * more classes of offset than n - 1 but at most CLASSES_PER_LAYOUT times
 * n, one layout in each class and the recorded one, so that a rare class
 * (brkjump's 6144 kB, 16 offsets of 512) is seen and the median weighs
 * every offset; beyond that, the n drawn.  The heap's classes where the
 * heap's place matters, the mmap base's where only its place does
 * (layout_plan).
 */
#define CLASSES_PER_LAYOUT 4

static int every_class(const struct replay_opts *o, const struct replay_result *res, int n)
{
	int need = 0;

	if (res->layout_sensitive < 0 || (res->layout_sensitive & REPLAY_REGION_BRK))
		need = count_classes(res->heap_breaks) + 1;
	if (res->layout_sensitive == REPLAY_REGION_MMAP && !res->mmap_unclassed &&
	    !under_pressure(o, res))
		need = count_classes(res->mmap_breaks) + 1;
	return need > n && need <= CLASSES_PER_LAYOUT * n + 1 ? need : n;
}

/* The heap's classes always (the rare heaps drawn); the mmap base's where
 * only its place can change the figures (its weights then stand for the
 * layouts; the heap's shift does not matter). */
static void layout_plan(const struct replay_opts *o, const struct replay_result *res,
			struct replay_ranges *g, double *w)
{
	g->heap_classes = class_plan(res->heap_breaks, g->layouts, g->seed ^ 0x5bd1e995ULL,
				     g->heap_shift, w);
	for (int k = 0; k < g->layouts; k++)
		g->mmap_shift[k] = -1;
	if (res->layout_sensitive == REPLAY_REGION_MMAP && !res->mmap_unclassed &&
	    !under_pressure(o, res))
		g->mmap_classes = class_plan(res->mmap_breaks, g->layouts, g->seed ^ 0xc2b2ae35ULL,
					     g->mmap_shift, w);
}

/*
 * khugepaged's phases: where it is in its sleep when the program's first
 * mm registers.  On an idle machine it wakes at once (the replay's
 * default, layout 0's); on a busy one it is anywhere in its sleep, or
 * scanning other mms for longer than the program lives.  Within the
 * window W (its sleep, or the trace if shorter) its first wake-up can
 * come at any moment, and what it finds depends on the moment, not in
 * step with it (the 6.18 guest's python3 row: a THP left in the parent's
 * heap where it wakes 1050-1200 ms or 1750-1900 ms in, none between):
 * at once, at points through W, and asleep through the trace (as
 * --khugepaged off; --settle still runs it after).  The points share a
 * budget of PHASE_BUDGET runs with the layouts: 16 under the recorded
 * layout alone, spaced evenly, the last at W's end; under more layouts,
 * fewer than PHASE_SCAN, the moments where the outcome changes: the
 * recorded layout is replayed waking at PHASE_SCAN moments spaced evenly
 * through W, and each layout is replayed at the first moment of each
 * outcome (its figures) other than waking at once's (phase_classes).
 * Spaced evenly, 2 points (half-way and the end) under 16 layouts missed
 * what the kernel did (the 6.12 guest's redis-server: a 2 MiB range of
 * the server's heap collapsed before the BGSAVE fork in 2 runs of 16,
 * where the model's khugepaged collapses it waking 2.2 to 3.4 s into a
 * 4.2 s window, not at 2.1 s nor at 4.2 s; with 51 layouts, a run that also
 * had libjemalloc's bss on a THP, 15580 kB, lay above every one).  Only
 * where khugepaged collapses something in layout 0, waking at once or at
 * one of four probes (collapses_later), and the phase is not pinned; each
 * phase weighs alike.
 */
#define PHASE_BUDGET 32
#define PHASE_SCAN 16

/* The recorded layout replayed with khugepaged's first wake-up ms after
 * the program's memory registers (no probe, no progress lines). */
static int replay_at_phase(const char *path, const struct replay_opts *o, uint64_t ms,
			   struct replay_result *r)
{
	struct replay_opts p = *o;
	char err[256];

	p.layout = 0;
	p.layout_probe = 0;
	p.progress = 0;
	p.khugepaged_phase_ms = ms;
	return replay_run(path, &p, r, err, sizeof(err));
}

/* fn(arg) on nth threads, this one among them, until it returns on each. */
static void on_threads(void *(*fn)(void *), void *arg, int nth)
{
	pthread_t th[64];
	int started = 0;

	for (int t = 1; t < nth && t < 64; t++)
		started += !pthread_create(&th[started], NULL, fn, arg);
	fn(arg);
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}

/* A replay's outcome: its figures that the ranges take, hashed (FNV-1a). */
static uint64_t outcome(const struct replay_result *r)
{
	uint64_t h = 14695981039346656037ULL;

#define HASH(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ULL)
#define MACHINE(name, label, expr) HASH(expr);
	RANGE_MACHINE_FIGURES(MACHINE)
#undef MACHINE
	HASH(r->nmms);
	for (int i = 0; i < r->nmms; i++) {
		const struct replay_mm *mm = r->mms[i];

#define MM(name, label, expr) HASH(expr);
		RANGE_MM_FIGURES(MM)
#undef MM
	}
#undef HASH
	return h;
}

/* The recorded layout's replays at a phase already made (collapses_later's
 * probes): their moments and outcomes, which the phase scan takes instead
 * of replaying them again. */
struct probes {
	int n;
	uint64_t ms[4], sig[4];
};

/*
 * Where khugepaged waking at once collapsed nothing, it may still collapse
 * waking later, once the program has made its memory collapsible (the
 * 6.18 guest's limit row sparse-dontneed: ranges whose PMDs a
 * MADV_DONTNEED split, collapsed back by the kernel's khugepaged in one
 * run of three, and by the model's waking 12 to 28 ms into a 31 ms trace,
 * not at once and not at its end), or only at the very end, once the
 * program's last writes are done (the 6.12 guest's coverletter-madvise-
 * write: 2 MiB written 27 ms before the exit, after a second of reads,
 * collapsed back by the kernel's khugepaged in every run, by the model's
 * waking 955 to 985 ms into its 986 ms window).  Probes at a quarter, half
 * and three quarters of the window and at its end, in the recorded
 * layout: true at the first that collapses.  What was tried goes into
 * tried, each probe's outcome into p.
 */
static bool collapses_later(const char *path, const struct replay_opts *o, uint64_t w,
			    char *tried, size_t size, struct probes *p)
{
	size_t len = 0;

	tried[0] = 0;
	if (w < 4) {
		snprintf(tried, size, "later (a %llu ms window)", (unsigned long long)w);
		return false;
	}
	for (int i = 1; i <= 4; i++) {
		const uint64_t ms = i < 4 ? w * (uint64_t)i / 4 : w - 1;
		struct replay_result r;
		bool collapsed;

		if (replay_at_phase(path, o, ms, &r))
			return false; /* layout 0 ran; the full plan would fail the same */
		collapsed = r.khugepaged_collapsed > 0;
		p->ms[p->n] = ms;
		p->sig[p->n++] = outcome(&r);
		replay_result_free(&r);
		if (collapsed)
			return true;
		if (len < size)
			len += (size_t)snprintf(tried + len, size - len, "%s%llu ms",
						i == 1 ? "at " : i == 4 ? " or " : ", ",
						(unsigned long long)ms);
	}
	if (len < size)
		snprintf(tried + len, size - len, " later");
	return false;
}

/* The window of khugepaged's first wake-up: from the moment the first mm
 * registers (a phase counts from there, replay.c's khug_check_registered)
 * to the end of the trace, or its sleep if shorter; 0 where none
 * registered.  Counted from the trace's start instead, its last moments
 * fell after the exit by the time the program took to register (17 ms of
 * coverletter-madvise-write's second, the moments where it collapses). */
static uint64_t phase_window_ms(const struct replay_result *res)
{
	uint64_t w;

	if (!res->khugepaged_registered || res->khugepaged_registered_ns >= res->duration_ns)
		return 0;
	w = (res->duration_ns - res->khugepaged_registered_ns) / 1000000;
	return w > res->khugepaged_scan_sleep_ms ? res->khugepaged_scan_sleep_ms : w;
}

struct scan {
	const char *path;
	const struct replay_opts *o;
	const struct probes *known;
	uint64_t ms[PHASE_SCAN], sig[PHASE_SCAN];
	pthread_mutex_t lock;
	int next, failed;
};

/* Was the recorded layout replayed waking at ms already?  Its outcome into sig. */
static bool probed(const struct probes *p, uint64_t ms, uint64_t *sig)
{
	for (int i = 0; i < p->n; i++)
		if (p->ms[i] == ms) {
			*sig = p->sig[i];
			return true;
		}
	return false;
}

static void *scan_worker(void *arg)
{
	struct scan *s = arg;

	for (;;) {
		struct replay_result r;
		int i;

		pthread_mutex_lock(&s->lock);
		i = s->failed ? PHASE_SCAN : s->next++;
		pthread_mutex_unlock(&s->lock);
		if (i >= PHASE_SCAN)
			return NULL;
		if (probed(s->known, s->ms[i], &s->sig[i]))
			continue;
		if (replay_at_phase(s->path, s->o, s->ms[i], &r)) {
			pthread_mutex_lock(&s->lock);
			s->failed = 1;
			pthread_mutex_unlock(&s->lock);
		} else {
			s->sig[i] = outcome(&r);
		}
		replay_result_free(&r);
	}
}

/*
 * The recorded layout waking at PHASE_SCAN moments through the window w
 * (those among the known probes' are not replayed again: the probes' four
 * moments are four of the scan's), on up to "threads" threads: into ms[],
 * the first moment of each outcome
 * other than waking at once's (res's), at most "points" of them (spread
 * over the list where there are more).  Returns how many, or -1 where a
 * replay failed.
 */
static int phase_classes(const char *path, const struct replay_opts *o,
			 const struct replay_result *res, const struct probes *known, uint64_t w,
			 int points, int threads, uint64_t *ms)
{
	struct scan s = { .path = path, .o = o, .known = known,
			  .lock = PTHREAD_MUTEX_INITIALIZER };
	uint64_t first[PHASE_SCAN], sig[PHASE_SCAN], at_once = outcome(res);
	int k = 0;

	for (int i = 0; i < PHASE_SCAN; i++)
		s.ms[i] = i < PHASE_SCAN - 1 ? w * (uint64_t)(i + 1) / PHASE_SCAN : w - 1;
	on_threads(scan_worker, &s, threads < 1 ? 1 : threads > PHASE_SCAN ? PHASE_SCAN : threads);
	if (s.failed)
		return -1;
	for (int i = 0; i < PHASE_SCAN; i++) {
		int seen = s.sig[i] == at_once;

		for (int c = 0; c < k && !seen; c++)
			seen = sig[c] == s.sig[i];
		if (!seen) {
			sig[k] = s.sig[i];
			first[k++] = s.ms[i];
		}
	}
	if (k <= points) {
		memcpy(ms, first, (size_t)k * sizeof(*ms));
		return k;
	}
	for (int j = 0; j < points; j++)
		ms[j] = first[j * k / points];
	return points;
}

static void phase_plan(const char *path, const struct replay_opts *o,
		       const struct replay_result *res, struct replay_ranges *g, int threads)
{
	uint64_t w = phase_window_ms(res);
	int points = PHASE_BUDGET / (g->layouts > 0 ? g->layouts : 1);

	g->phases = 1;
	g->phase_ms[0] = o->khugepaged_phase_ms;
	if (o->no_khugepaged) {
		snprintf(g->phase_why, sizeof(g->phase_why), "khugepaged off during the trace");
		return;
	}
	if (o->khugepaged_phase_pinned) {
		snprintf(g->phase_why, sizeof(g->phase_why), "khugepaged's phase pinned at %llu ms",
			 (unsigned long long)o->khugepaged_phase_ms);
		return;
	}
	char tried[sizeof(g->phase_why)];
	struct probes known = { 0 };

	if (!res->khugepaged_collapsed &&
	    !collapses_later(path, o, w, tried, sizeof(tried), &known)) {
		snprintf(g->phase_why, sizeof(g->phase_why),
			 "not varied: khugepaged collapsed nothing waking at once, nor %s", tried);
		return;
	}
	points = points < 2 ? 2 : points > REPLAY_MAX_PHASES - 2 ? REPLAY_MAX_PHASES - 2 : points;
	if (points < PHASE_SCAN && w >= 2 * PHASE_SCAN) {
		uint64_t ms[PHASE_SCAN];
		int k = phase_classes(path, o, res, &known, w, points, threads, ms);
		size_t len;

		if (k >= 0) {
			for (int i = 0; i < k; i++)
				g->phase_ms[g->phases++] = ms[i];
			g->phase_ms[g->phases++] = UINT64_MAX;
			len = (size_t)snprintf(g->phase_why, sizeof(g->phase_why),
					       "each layout with khugepaged waking at once");
			for (int i = 0; i < k && len < sizeof(g->phase_why); i++)
				len += (size_t)snprintf(g->phase_why + len, sizeof(g->phase_why) - len,
							"%s%llu ms", i == 0 ? ", at " :
							i == k - 1 ? " and " : ", ",
							(unsigned long long)ms[i]);
			if (len < sizeof(g->phase_why))
				snprintf(g->phase_why + len, sizeof(g->phase_why) - len,
					 "%s and asleep through the trace; %s %d moments %llu ms "
					 "apart tried in the recorded layout%s",
					 k ? " later," : "",
					 k ? "the later ones are the first of each other outcome "
					     "among" : "each of", PHASE_SCAN,
					 (unsigned long long)(w / PHASE_SCAN),
					 k ? "" : " gave what waking at once gave");
			return;
		}
	}
	if (w < 2 * (uint64_t)points)
		points = w >= 4 ? 2 : 0;
	for (int i = 1; i <= points; i++)
		g->phase_ms[g->phases++] = i < points ? w * (uint64_t)i / (uint64_t)points : w - 1;
	g->phase_ms[g->phases++] = UINT64_MAX;
	if (points == 2)
		snprintf(g->phase_why, sizeof(g->phase_why),
			 "each layout with khugepaged waking at once, %llu ms and %llu ms later, and "
			 "asleep through the trace", (unsigned long long)g->phase_ms[1],
			 (unsigned long long)g->phase_ms[2]);
	else if (points)
		snprintf(g->phase_why, sizeof(g->phase_why),
			 "each layout with khugepaged waking at once, at %d moments from %llu ms to %llu ms "
			 "later, %llu ms apart, and asleep through the trace", points,
			 (unsigned long long)g->phase_ms[1], (unsigned long long)g->phase_ms[points],
			 (unsigned long long)(w / (uint64_t)points));
	else
		snprintf(g->phase_why, sizeof(g->phase_why),
			 "each layout with khugepaged waking at once and asleep through the trace");
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

/*
 * Where layout 0's probe found that only the heap's shift (or only the mmap
 * base's) can change the figures: a layout whose place of that region
 * falls in the class of an earlier one's gives that one's figures, phase
 * for phase, and is not run.
 */
static void same_class_plan(const struct replay_opts *o, const struct replay_result *res,
			    struct replay_ranges *g)
{
	int first[HEAP_OFFSETS], heap = res->layout_sensitive == REPLAY_REGION_BRK;
	const uint8_t *breaks = heap ? res->heap_breaks : res->mmap_breaks;
	const int64_t *shift = heap ? g->heap_shift : g->mmap_shift;

	if ((heap ? !g->heap_classes : res->layout_sensitive != REPLAY_REGION_MMAP || !g->mmap_classes) ||
	    under_pressure(o, res) || !(g->same_as = malloc((size_t)g->n * sizeof(int))))
		return;
	for (int c = 0; c < HEAP_OFFSETS; c++)
		first[c] = -1;
	for (int l = 0; l < g->layouts; l++) {
		int64_t sh = l ? shift[l] : 0;
		int c = sh < 0 ? -1 : heap_class(breaks, (int)(sh / 4096));

		for (int p = 0; p < g->phases; p++)
			g->same_as[l * g->phases + p] =
				c >= 0 && first[c] >= 0 ? first[c] * g->phases + p : -1;
		if (c >= 0 && first[c] < 0)
			first[c] = l;
	}
}

/* Run k's figures are run src's. */
static void take_same(struct replay_ranges *g, int k, int src)
{
	for (int f = 0; f < RANGE_NR_MACHINE; f++)
		g->machine[(size_t)f * g->n + k] = g->machine[(size_t)f * g->n + src];
	for (int i = 0; i < g->nmms; i++) {
		uint64_t *v = g->mm + (size_t)i * RANGE_NR_MM * g->n;

		for (int f = 0; f < RANGE_NR_MM; f++)
			v[(size_t)f * g->n + k] = v[(size_t)f * g->n + src];
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
	if (res->madv_collapse_calls) /* which ignores enabled; the probe sees it */
		goto probed;
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
		goto probed;
	if (!madvise)
		snprintf(why, len, "every THP size is never: no page can be in a THP");
	else if (!res->madv_hugepage_calls)
		snprintf(why, len, "THP only on MADV_HUGEPAGE, which the program never asked for");
	if (*why)
		return;
probed:
	if (!res->layout_sensitive && !under_pressure(o, res))
		snprintf(why, len, "no fault or MADV_COLLAPSE fell where a THP could be in a mapping that a layout "
				   "moves within 2 MiB (the kernel puts it on a 2 MiB boundary, or it "
				   "stays where the program put it, or it is smaller than a THP)");
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
		int64_t heap;
		char err[512];
		int k;

		pthread_mutex_lock(&j->lock);
		k = j->failed ? j->g->n : j->next++;
		pthread_mutex_unlock(&j->lock);
		if (k >= j->g->n)
			return NULL;
		if (j->g->same_as && j->g->same_as[k] >= 0)
			continue; /* its figures are another run's */
		heap = j->g->heap_shift[k / j->g->phases];
		o.heap_chosen = heap >= 0;
		o.heap_shift = heap;
		o.mmap_chosen = j->g->mmap_shift[k / j->g->phases] >= 0;
		o.mmap_shift = j->g->mmap_shift[k / j->g->phases];
		o.layout = k / j->g->phases;
		if (j->g->phase_ms[k % j->g->phases] == UINT64_MAX)
			o.no_khugepaged = 1;
		else
			o.khugepaged_phase_ms = j->g->phase_ms[k % j->g->phases];
		o.progress = 0;
		if (replay_run(j->path, &o, &r, err, sizeof(err))) {
			pthread_mutex_lock(&j->lock);
			if (!j->failed++)
				snprintf(j->err, sizeof(j->err), "layout %d: %s", k / j->g->phases, err);
			pthread_mutex_unlock(&j->lock);
		} else {
			pthread_mutex_lock(&j->lock);
			take(j->g, k, &r);
			if (j->g->overall) { /* the series kept, for the band over time */
				j->g->overall[k] = r.overall;
				memset(&r.overall, 0, sizeof(r.overall));
			}
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

int replay_run_layouts(const char *path, const struct replay_opts *o, int threads,
		       struct replay_result *res, char *err, size_t errlen)
{
	struct replay_opts o0 = *o;
	struct replay_ranges *g;
	double t0 = now_s(), *wl;
	int e;

	o0.layout = 0;
	o0.layout_probe = (o->layouts > 0 ? o->layouts : REPLAY_LAYOUTS_DEFAULT) > 1;
	e = replay_run(path, &o0, res, err, errlen);
	if (e)
		return e;
	g = calloc(1, sizeof(*g));
	if (!g)
		return 0; /* the report stands without its ranges */
	res->ranges = g;
	g->asked = o->layouts > 0 ? o->layouts : REPLAY_LAYOUTS_DEFAULT;
	g->seed = o->layout_seed;
	g->sensitive = res->layout_sensitive;
	layout_fixed(o, res, g->fixed, sizeof(g->fixed));
	g->layouts = g->fixed[0] ? 1 : g->asked;
	if (g->layouts > 1)
		g->layouts = every_class(o, res, g->layouts);
	phase_plan(path, o, res, g, threads); /* with --layouts 1 too: the phase is not the layout */
	g->n = g->layouts * g->phases;
	g->nmms = res->nmms;
	g->machine = calloc((size_t)RANGE_NR_MACHINE * g->n, sizeof(uint64_t));
	g->mm = calloc((size_t)(g->nmms ? g->nmms : 1) * RANGE_NR_MM * g->n, sizeof(uint64_t));
	g->weight = calloc((size_t)g->n, sizeof(double));
	g->heap_shift = calloc((size_t)g->layouts, sizeof(int64_t));
	g->mmap_shift = calloc((size_t)g->layouts, sizeof(int64_t));
	g->overall = calloc((size_t)g->n, sizeof(*g->overall)); /* NULL: no band */
	wl = calloc((size_t)g->layouts, sizeof(double));
	if (!g->machine || !g->mm || !g->weight || !g->heap_shift || !g->mmap_shift || !wl) {
		free(wl);
		replay_ranges_free(g);
		res->ranges = NULL;
		return 0;
	}
	take(g, 0, res);
	wl[0] = 1;
	if (g->n > 1) {
		struct job j = { .path = path, .o = o, .g = g, .lock = PTHREAD_MUTEX_INITIALIZER,
				 .next = 1 };
		int nth = threads < 1 ? 1 : threads;

		if (nth > g->n - 1)
			nth = g->n - 1;
		if (g->layouts > 1) {
			layout_plan(o, res, g, wl);
			same_class_plan(o, res, g);
		}
		on_threads(worker, &j, nth);
		if (j.failed) {
			snprintf(err, errlen, "%s", j.err);
			free(wl);
			replay_result_free(res); /* frees g */
			return -EIO;
		}
	}
	g->made = g->n;
	for (int k = 0; g->same_as && k < g->n; k++)
		if (g->same_as[k] >= 0) {
			take_same(g, k, g->same_as[k]);
			g->made--;
		}
	for (int k = 0; k < g->n; k++)
		g->weight[k] = wl[k / g->phases] / g->phases;
	free(wl);
	g->seconds = now_s() - t0;
	return 0;
}

/* Run r's value at t_ns: its last point at or before it (0 before its
 * first). */
static uint64_t series_at(const struct replay_series *s, uint64_t t_ns, int huge)
{
	int lo = 0, hi = s->n; /* the first point after t_ns */

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->p[mid].t_ns <= t_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	return huge ? s->p[lo - 1].mem_anon_huge_kb : s->p[lo - 1].anon_pages_kb;
}

void replay_band_at(const struct replay_result *res, uint64_t t_ns, int huge, uint64_t *lo,
		    uint64_t *hi)
{
	const struct replay_ranges *g = res->ranges;

	*lo = *hi = series_at(&res->overall, t_ns, huge);
	if (!g || !g->overall)
		return;
	for (int k = 1; k < g->n; k++) {
		uint64_t v;

		if (!g->overall[k].n)
			continue;
		v = series_at(&g->overall[k], t_ns, huge);
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
}

void replay_ranges_free(struct replay_ranges *g)
{
	if (g) {
		for (int k = 0; g->overall && k < g->n; k++)
			free(g->overall[k].p);
		free(g->overall);
		free(g->machine);
		free(g->mm);
		free(g->weight);
		free(g->heap_shift);
		free(g->mmap_shift);
		free(g->same_as);
		free(g);
	}
}
