/*
 * test_layouts.c - a trace replayed under other address layouts
 * (src/replay/layout.c, ranges.c).  The figures expected are computed here
 * from each layout's shifts with the kernel's rule, not taken from the
 * model: a fault maps a THP only where the whole 2 MiB-aligned block lies
 * inside the VMA (thp_vma_suitable_order) and nothing of it is mapped yet
 * (do_huge_pmd_anonymous_page needs an empty PMD); an anonymous mmap
 * without a hint of a 2 MiB multiple starts on a 2 MiB boundary on 6.12+
 * (__get_unmapped_area's THP alignment), and anywhere on 6.1.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test.h"
#include "replay/replay.h"
#include "trace/trace.h"

#define PID 300
#define RW 3
#define ANON_PRIVATE 0x22
#define SEED 7
#define NLAYOUTS 16

static struct trace_writer W;
static char P[128];

static void lbegin(const char *tag, const char *enabled, uint64_t start_brk)
{
	struct trace_header h = { 0 };

	snprintf(P, sizeof(P), "/tmp/thpsim-test-%d-layout-%s.trace", (int)getpid(), tag);
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", enabled));
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/use_zero_page", "1"));
	ASSERT_OK(trace_writer_open(&W, P, &h));
	trace_write_proc(&W, PID);
	trace_write_exec(&W, "/bin/prog", start_brk, start_brk, 8 << 20);
}

static void lsys(int nr, int64_t ret, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	uint64_t args[6] = { a0, a1, a2, a3, 0, 0 };

	trace_write_syscall(&W, nr, 6, args, ret);
}

static void lwrite(uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr & ~(PAGE - 1); a < addr + len; a += PAGE)
		trace_write_fault(&W, a, 1, 0);
}

static void lreplay(int layout, struct replay_result *r, const char *kv, ...)
{
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .no_khugepaged = 1,
				 .layout = layout, .layout_seed = SEED };
	char err[1024];
	va_list ap;

	va_start(ap, kv);
	for (; kv; kv = va_arg(ap, const char *)) {
		ASSERT_OK(knob_sets_add(&o.knobs, kv));
	}
	va_end(ap);
	if (replay_run(P, &o, r, err, sizeof(err)))
		test_fail(__FILE__, __LINE__, "replay: %s", err);
	ASSERT_EQ(r->skips[REPLAY_SKIP_fault_unmapped], 0);
	ASSERT_EQ(r->skips[REPLAY_SKIP_call_failed], 0);
	ASSERT_EQ(r->skips[REPLAY_SKIP_brk_diverged], 0);
}

static uint64_t final_huge_kb(const struct replay_result *r)
{
	return r->mms[r->nmms - 1]->final[THPS_PROC_AnonHugePages];
}

/* The 2 MiB blocks wholly inside [from, to). */
static uint64_t whole_blocks(uint64_t from, uint64_t to)
{
	uint64_t b = (from + HPAGE - 1) & ~(HPAGE - 1);

	return to >= b + HPAGE ? (to - b) / HPAGE : 0;
}

static const uint64_t jumps[] = { KB(1300), KB(2900), KB(700), KB(4100), KB(3300), KB(1800),
				  KB(5200), KB(2500) };
#define NJUMPS (sizeof(jumps) / sizeof(jumps[0]))

/* The heap grows by brk in jumps; each new part is madvised and written
 * at once (tests/progs/brkjump.c).  A block gets a THP when it lies
 * within one jump's new pages: one straddling the break at a jump has
 * pages mapped before the next jump makes it whole. */
static uint64_t brk_expected_kb(uint64_t heap)
{
	uint64_t brk = heap, n = 0;

	for (size_t j = 0; j < NJUMPS; j++) {
		uint64_t first_new = (brk + PAGE - 1) & ~(PAGE - 1); /* pages below were written */
		uint64_t end = (brk + jumps[j] + PAGE - 1) & ~(PAGE - 1);

		n += whole_blocks(first_new, end);
		brk += jumps[j];
	}
	return n * 2048;
}

/* The trace of that heap, under madvise, at P; tick_ns: a jump every
 * tick_ns of trace time and the exit at 200 ms (0: no time). */
static void brk_trace(const char *tag, uint64_t heap, uint64_t tick_ns)
{
	uint64_t brk = heap;

	lbegin(tag, "madvise", heap);
	lsys(12, (int64_t)heap, 0, 0, 0, 0);
	for (size_t j = 0; j < NJUMPS; j++) {
		uint64_t from = (brk + PAGE - 1) & ~(PAGE - 1);

		if (tick_ns)
			trace_write_time(&W, (j + 1) * tick_ns, 0);
		lsys(12, (int64_t)(brk + jumps[j]), brk + jumps[j], 0, 0, 0);
		lsys(28, 0, from, brk + jumps[j] - from, 14 /* MADV_HUGEPAGE */, 0);
		lwrite(brk, jumps[j]);
		brk += jumps[j];
	}
	if (tick_ns)
		trace_write_time(&W, 200000000ULL, 0);
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
}

TEST(layouts_a_brk_heap_gets_the_thps_its_offset_allows)
{
	const uint64_t heap = 0x555555659000ULL; /* a PIE's heap, 356 KiB into a block */
	uint64_t seen_lo = UINT64_MAX, seen_hi = 0;

	brk_trace("brk", heap, 0);
	for (int k = 0; k < NLAYOUTS; k++) {
		struct replay_result r;
		struct replay_shifts d;
		uint64_t want, got;

		replay_layout_shifts(SEED, k, -1, -1, &d);
		ASSERT(k > 0 || (d.exe == 0 && d.brk == 0 && d.mmap == 0 && d.stack == 0));
		ASSERT(d.brk >= d.exe && d.brk - d.exe < (int64_t)HPAGE && d.exe < (int64_t)HPAGE);
		ASSERT(d.mmap <= 0 && d.mmap > -(int64_t)HPAGE && d.stack <= 0);
		want = brk_expected_kb(heap + (uint64_t)d.brk);
		lreplay(k, &r, NULL);
		got = final_huge_kb(&r);
		if (got != want)
			test_fail(__FILE__, __LINE__, "layout %d (heap +%lld): AnonHugePages %llu, want %llu",
				  k, (long long)d.brk, (unsigned long long)got, (unsigned long long)want);
		seen_lo = got < seen_lo ? got : seen_lo;
		seen_hi = got > seen_hi ? got : seen_hi;
		replay_result_free(&r);
	}
	ASSERT(seen_lo < seen_hi); /* the offsets drawn make a difference */
	unlink(P);
}

/* The band over time (compare's chart, replay's CSV): at each moment the
 * lowest and highest of every layout's series.  The brk heap above, one
 * jump every 10 ms: while the heap grows the band holds layout 0's value,
 * and just before the exit it spans the layouts' final AnonHugePages. */
TEST(layouts_band_over_time_spans_the_layouts)
{
	const uint64_t heap = 0x555555659000ULL;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .no_khugepaged = 1,
				 .layout_seed = SEED, .layouts = NLAYOUTS };
	struct replay_result r;
	uint64_t lo, hi, v[3];
	char err[1024];

	brk_trace("band", heap, 10000000ULL);
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->n == NLAYOUTS && r.ranges->overall);
	for (int k = 1; k < NLAYOUTS; k++) /* a run not made is another's copy */
		ASSERT(r.ranges->overall[k].n > 0 ||
		       (r.ranges->same_as && r.ranges->same_as[k] >= 0));
	for (int i = 0; i < r.overall.n; i++) {
		const struct replay_point *pt = &r.overall.p[i];

		if (i + 1 < r.overall.n && r.overall.p[i + 1].t_ns == pt->t_ns)
			continue; /* a moment's value is its last point's */
		replay_band_at(&r, pt->t_ns, 1, &lo, &hi);
		ASSERT(lo <= pt->mem_anon_huge_kb && pt->mem_anon_huge_kb <= hi);
		replay_band_at(&r, pt->t_ns, 0, &lo, &hi);
		ASSERT(lo <= pt->anon_pages_kb && pt->anon_pages_kb <= hi);
	}
	/* the last jump's writes are at 80 ms; the exit at 200 ms */
	replay_band_at(&r, 199000000ULL, 1, &lo, &hi);
	replay_spread(r.ranges->machine + (size_t)RANGE_final_AnonHugePages * NLAYOUTS, NLAYOUTS,
		      v);
	ASSERT_EQ(lo, v[0]);
	ASSERT_EQ(hi, v[2]);
	ASSERT(lo < hi);
	replay_result_free(&r);
	unlink(P);
}

/* A 4 MiB anonymous mmap recorded on 6.1, 4 KiB past a boundary.  Under a
 * 6.12 profile every other layout puts it on a boundary (2 THPs when
 * written); under 6.1's rule it keeps its offset plus the mmap shift (2
 * THPs only where the shift lands it on one, else 1).  One mapped at a
 * hint the kernel took stays there in every layout. */
TEST(layouts_aligned_anonymous_mmaps_and_hints)
{
	const uint64_t at = 0x7f0000201000ULL, hint = 0x200000000ULL;

	lbegin("align", "always", 0x555555659000ULL);
	lsys(9, (int64_t)at, 0, MB(4), RW, ANON_PRIVATE);
	lwrite(at, MB(4));
	lsys(9, (int64_t)hint, hint, MB(4), RW, ANON_PRIVATE);
	lwrite(hint, MB(4));
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	for (int k = 0; k < NLAYOUTS; k++) {
		struct replay_result r;
		struct replay_shifts d;
		uint64_t start, want;

		replay_layout_shifts(SEED, k, -1, -1, &d);
		lreplay(k, &r, "thpsim/anon_thp_align=pmd-multiple", NULL);
		want = (k == 0 ? whole_blocks(at, at + MB(4)) : 2) * 2048 + 4096;
		ASSERT_EQ(final_huge_kb(&r), want);
		replay_result_free(&r);

		lreplay(k, &r, "thpsim/anon_thp_align=none", NULL);
		start = at + (uint64_t)d.mmap;
		want = whole_blocks(start, start + MB(4)) * 2048 + 4096;
		ASSERT_EQ(final_huge_kb(&r), want);
		replay_result_free(&r);
	}
	unlink(P);
}

/* A reservation with fixed mappings inside it (ld.so's segments, Go's
 * arena), munmap and mprotect across it, a fork: the child's calls move
 * with the parent's layout, nothing falls outside a mapping. */
TEST(layouts_fixed_maps_inside_a_reservation_and_fork)
{
	const uint64_t res = 0x7f1000000000ULL + 0x3000;

	lbegin("fixed", "always", 0x555555659000ULL);
	lsys(9, (int64_t)res, 0, MB(8), 0, ANON_PRIVATE);                  /* PROT_NONE */
	lsys(9, (int64_t)(res + MB(1)), res + MB(1), MB(4), RW, ANON_PRIVATE | 0x10); /* MAP_FIXED */
	lwrite(res + MB(1), MB(4));
	lsys(10, 0, res + MB(2), MB(3), 1 /* PROT_READ */, 0);                     /* mprotect */
	trace_write_fork(&W, PID + 1, 0x11 /* SIGCHLD */);
	trace_write_proc(&W, PID + 1);
	lwrite(res + MB(1), MB(1));                                         /* COW */
	lsys(11, 0, res, MB(8), 0, 0);                                      /* munmap */
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	for (int k = 0; k < NLAYOUTS; k++) {
		struct replay_result r;

		lreplay(k, &r, NULL);
		ASSERT_EQ(r.nmms, 2);
		ASSERT_EQ(r.mms[1]->final[THPS_PROC_Anonymous], 0); /* the child unmapped it all */
		ASSERT_EQ(r.mms[0]->final[THPS_PROC_Anonymous], 4096);
		replay_result_free(&r);
	}
	unlink(P);
}

/* Where no page can be in a THP, one layout is enough, and the result
 * says why; where one can, every layout asked for is run. */
TEST(layouts_only_where_the_layout_can_matter)
{
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = SEED,
				 .layouts = NLAYOUTS };
	struct replay_result r;
	char err[1024];

	lbegin("fixed-policy", "madvise", 0x555555659000ULL);
	lsys(9, (int64_t)0x7f0000201000ULL, 0, MB(4), RW, ANON_PRIVATE);
	lwrite(0x7f0000201000ULL, MB(4));
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->n == 1 && r.ranges->fixed[0]);
	replay_result_free(&r);
	ASSERT_OK(knob_sets_add(&o.knobs, "transparent_hugepage/enabled=always"));
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->n == NLAYOUTS && !r.ranges->fixed[0]);
	ASSERT_EQ(r.ranges->nmms, r.nmms);
	/* layout 0's figures are the report's own */
	ASSERT_EQ(r.ranges->machine[(size_t)RANGE_final_AnonHugePages * NLAYOUTS],
		  r.final_meminfo[THPS_MEM_AnonHugePages]);
	replay_result_free(&r);
	unlink(P);
}

/* A trace under THP madvise whose khugepaged sleeps 10 s and scans 4096
 * pages a wake-up with max_ptes_none 511, the program exec'd: P named NAME. */
static void phase_trace_begin(const char *name)
{
	struct trace_header h = { 0 };

	snprintf(P, sizeof(P), "/tmp/thpsim-test-%d-%s.trace", (int)getpid(), name);
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", "madvise"));
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/khugepaged/scan_sleep_millisecs",
				   "10000"));
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/khugepaged/pages_to_scan", "4096"));
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/khugepaged/max_ptes_none", "511"));
	ASSERT_OK(trace_writer_open(&W, P, &h));
	trace_write_proc(&W, PID);
	trace_write_exec(&W, "/bin/prog", 0x555555659000ULL, 0x555555659000ULL, 8 << 20);
}

/* Half of the 4 MiB at "at" written, every other page, in 4 KiB pages. */
static void write_every_other_page(uint64_t at)
{
	for (uint64_t a = at; a < at + MB(4); a += 2 * PAGE)
		trace_write_fault(&W, a, 1, 0);
}

/* The program's exit 3 s into the trace, and the trace closed. */
static void phase_trace_end(void)
{
	trace_write_time(&W, 3000ULL * 1000000, 0);
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
}

/*
 * khugepaged's phase.  A 4 MiB range written half (every other page) in
 * 4 KiB pages, then madvised: the mm registers with khugepaged
 * (khugepaged_enter_vma), which collapses both ranges at its next wake-up
 * (max_ptes_none 511 allows 256 empty PTEs).  The program lives 3 s more,
 * khugepaged sleeps 10 s between scans, so its first wake-up may come any
 * time in the 3 s the trace lasts: waking at once, or at any of 16
 * moments 187 ms apart through the 3 s (the last just before the exit),
 * it collapses both; asleep through the trace, neither.  No layout
 * matters, so the one layout gets the whole budget of phases (ranges.c,
 * PHASE_BUDGET: 32 runs over the layouts, at most 16 moments).
 */
TEST(layouts_khugepaged_phase_varies_where_it_collapsed)
{
	const uint64_t at = 0x7f0000200000ULL;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = SEED, .layouts = 4 };
	struct replay_result r;
	uint64_t s[3];
	char err[1024];

	phase_trace_begin("layout-phase");
	lsys(9, (int64_t)at, 0, MB(4), RW, ANON_PRIVATE);
	write_every_other_page(at);
	lsys(28, 0, at, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	phase_trace_end();

	/* the 4 MiB mapping, a 2 MiB multiple recorded on a 2 MiB boundary,
	 * is on one in every layout (6.12+'s alignment, the default profile's):
	 * no layout can change the figures, so one is run, under each phase */
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT_EQ(r.vm[THPS_VM_thp_collapse_alloc], 2); /* layout 0: at once */
	ASSERT(r.ranges && r.ranges->phases == 18 && r.ranges->layouts == 1 && r.ranges->n == 18);
	ASSERT(r.ranges->fixed[0] && r.ranges->sensitive == 0);
	ASSERT_EQ(r.ranges->phase_ms[0], 0);
	ASSERT_EQ(r.ranges->phase_ms[1], 187); /* 3000 ms / 16 */
	ASSERT_EQ(r.ranges->phase_ms[8], 1500);
	ASSERT_EQ(r.ranges->phase_ms[16], 2999);
	ASSERT_EQ(r.ranges->phase_ms[17], UINT64_MAX);
	replay_spread(r.ranges->machine + (size_t)RANGE_thp_collapse_alloc * r.ranges->n,
		      r.ranges->n, s);
	ASSERT_EQ(s[0], 0);
	ASSERT_EQ(s[2], 2);
	for (int k = 0; k < r.ranges->n; k++) /* one layout: phase k */
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_thp_collapse_alloc * r.ranges->n + k],
			  k == 17 ? 0 : 2);
	replay_result_free(&r);

	/* pinned 2 s into its sleep: it wakes before the exit, in every layout */
	o.khugepaged_phase_ms = 2000;
	o.khugepaged_phase_pinned = 1;
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->phases == 1 && r.ranges->n == 1);
	replay_spread(r.ranges->machine + (size_t)RANGE_thp_collapse_alloc * r.ranges->n,
		      r.ranges->n, s);
	ASSERT_EQ(s[0], 2);
	ASSERT_EQ(s[2], 2);
	replay_result_free(&r);
	unlink(P);
}

/*
 * khugepaged's phase where waking at once collapses nothing.  The mm
 * registers with khugepaged when a first 4 MiB range is madvised, still
 * empty; a second 4 MiB range is written half (every other page) in 4 KiB
 * pages and madvised only 1 s later, and the program lives 3 s.  Waking at
 * once, khugepaged finds nothing to collapse, and its next wake-up is 10 s
 * on; waking after the second madvise, it collapses both of its 2 MiB
 * ranges (max_ptes_none 511).  The probes at 750, 1500, 2250 and 2999 ms find
 * that at 1500 ms, so the phases vary as where the first wake-up
 * collapsed (ranges.c, collapses_later): the collapses range over 0 to 2.
 * Without the second madvise no phase collapses, and the reason says which
 * were tried.
 */
static void phase_later_trace(int second_madvise)
{
	const uint64_t a = 0x7f0000200000ULL, b = 0x7f0000800000ULL;

	phase_trace_begin("layout-phase-later");
	lsys(9, (int64_t)a, 0, MB(4), RW, ANON_PRIVATE);
	lsys(28, 0, a, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	lsys(9, (int64_t)b, 0, MB(4), RW, ANON_PRIVATE);
	write_every_other_page(b);
	trace_write_time(&W, 1000ULL * 1000000, 0);
	if (second_madvise)
		lsys(28, 0, b, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	phase_trace_end();
}

TEST(layouts_khugepaged_phase_probed_where_waking_at_once_collapsed_nothing)
{
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = SEED, .layouts = 1 };
	struct replay_result r;
	uint64_t s[3];
	char err[1024];

	phase_later_trace(1);
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT_EQ(r.vm[THPS_VM_thp_collapse_alloc], 0); /* layout 0: at once */
	ASSERT(r.ranges && r.ranges->phases == 18 && r.ranges->n == 18);
	replay_spread(r.ranges->machine + (size_t)RANGE_thp_collapse_alloc * r.ranges->n,
		      r.ranges->n, s);
	ASSERT_EQ(s[0], 0);
	ASSERT_EQ(s[2], 2);
	for (int k = 0; k < r.ranges->n; k++) /* before 1 s or asleep: none */
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_thp_collapse_alloc * r.ranges->n + k],
			  r.ranges->phase_ms[k] != UINT64_MAX && r.ranges->phase_ms[k] >= 1000 ? 2
											      : 0);
	replay_result_free(&r);

	phase_later_trace(0);
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->phases == 1 && r.ranges->n == 1);
	ASSERT(strstr(r.ranges->phase_why, "nor at 750 ms, 1500 ms, 2250 ms or 2999 ms later") != NULL);
	replay_result_free(&r);
	unlink(P);
}

/*
 * khugepaged's window counts from the mm's registration, not the trace's
 * start (ranges.c, phase_window_ms).  The program registers 1 s in (its
 * first madvise, of an empty range), writes half of a second 4 MiB range
 * in 4 KiB pages and madvises it 50 ms before its exit at 3 s: only a
 * first wake-up between
 * 2950 and 3000 ms collapses it, 1950 to 2000 ms after the registration.
 * The window is 2000 ms, and its last moment, 1999 ms, collapses both
 * ranges; counted from the trace's start the window was 3000 ms and every
 * moment of it, the probes' as well, missed those 50 ms.
 */
TEST(layouts_khugepaged_window_counts_from_the_registration)
{
	const uint64_t a = 0x7f0000200000ULL, b = 0x7f0000800000ULL;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = SEED, .layouts = 1 };
	struct replay_result r;
	uint64_t s[3];
	char err[1024];

	phase_trace_begin("layout-phase-window");
	trace_write_time(&W, 1000ULL * 1000000, 0);
	lsys(9, (int64_t)a, 0, MB(4), RW, ANON_PRIVATE);
	lsys(28, 0, a, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	lsys(9, (int64_t)b, 0, MB(4), RW, ANON_PRIVATE);
	trace_write_time(&W, 2950ULL * 1000000, 0);
	write_every_other_page(b);
	lsys(28, 0, b, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	phase_trace_end();

	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT_EQ(r.vm[THPS_VM_thp_collapse_alloc], 0); /* layout 0: at once */
	ASSERT(r.ranges && r.ranges->phases == 18 && r.ranges->n == 18);
	ASSERT_EQ(r.ranges->phase_ms[1], 125); /* 2000 ms / 16 */
	ASSERT_EQ(r.ranges->phase_ms[16], 1999);
	replay_spread(r.ranges->machine + (size_t)RANGE_thp_collapse_alloc * r.ranges->n,
		      r.ranges->n, s);
	ASSERT_EQ(s[0], 0);
	ASSERT_EQ(s[2], 2);
	for (int k = 0; k < r.ranges->n; k++) /* only the last moment is after the writes */
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_thp_collapse_alloc * r.ranges->n + k],
			  k == 16 ? 2 : 0);
	replay_result_free(&r);
	unlink(P);
}

/*
 * khugepaged's phases where the layouts leave few (ranges.c, phase_classes).
 * A 4 MiB mapping 4 KiB past a boundary, madvised and written (the mm
 * registers at 0 ms): the layout moves it, so 16 layouts are run and the
 * budget leaves each 2 moments.  A second 4 MiB range, written half (every
 * other page) in 4 KiB pages, is madvised MADV_HUGEPAGE 2200 ms in and
 * MADV_NOHUGEPAGE 100 ms later: only a first wake-up between 2200 and 2300
 * ms collapses its two ranges (max_ptes_none 511), and only waking at 2250
 * ms of the probes finds it (collapses_later).  Spaced evenly, the 2
 * moments were 1500 and 2999 ms, and no layout collapsed anything; the
 * scan of the recorded layout at 16 moments 187 ms apart finds the outcome
 * at 2250 ms (the 12th), the only one other than waking at once's, and
 * every layout is replayed waking then: 2 collapses in each.
 */
TEST(layouts_khugepaged_phases_where_the_outcome_changes)
{
	const uint64_t c = 0x7f0000201000ULL, b = 0x7f0000800000ULL;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = SEED,
				 .layouts = NLAYOUTS };
	struct replay_result r;
	char err[1024];

	phase_trace_begin("layout-phase-classes");
	lsys(9, (int64_t)c, 0, MB(4), RW, ANON_PRIVATE);
	lsys(28, 0, c, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	lwrite(c, MB(4));
	lsys(9, (int64_t)b, 0, MB(4), RW, ANON_PRIVATE);
	write_every_other_page(b);
	trace_write_time(&W, 2200ULL * 1000000, 0);
	lsys(28, 0, b, MB(4), 14 /* MADV_HUGEPAGE */, 0);
	trace_write_time(&W, 2300ULL * 1000000, 0);
	lsys(28, 0, b, MB(4), 15 /* MADV_NOHUGEPAGE */, 0);
	phase_trace_end();

	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT_EQ(r.vm[THPS_VM_thp_collapse_alloc], 0); /* layout 0: at once */
	ASSERT(r.ranges && r.ranges->layouts >= NLAYOUTS && r.ranges->sensitive == REPLAY_REGION_MMAP);
	ASSERT_EQ(r.ranges->phases, 3);
	ASSERT_EQ(r.ranges->phase_ms[0], 0);
	ASSERT_EQ(r.ranges->phase_ms[1], 2250); /* 3000 ms * 12 / 16 */
	ASSERT_EQ(r.ranges->phase_ms[2], UINT64_MAX);
	if (!strstr(r.ranges->phase_why, "at 2250 ms later"))
		test_fail(__FILE__, __LINE__, "phase_why: %s", r.ranges->phase_why);
	for (int k = 0; k < r.ranges->n; k++) /* each layout: at once, 2250 ms, asleep */
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_thp_collapse_alloc * r.ranges->n + k],
			  k % 3 == 1 ? 2 : 0);
	replay_result_free(&r);
	unlink(P);
}

/*
 * Layout 0's probe.  The 4 MiB mapping 4 KiB past a boundary, written,
 * under always: with 6.12's alignment every other layout puts it on a
 * boundary, so its region (mmap) matters and every layout is run; with
 * the mapping recorded on a boundary and the heap untouched, none matters
 * and one layout is run, but under a memory limit every one.
 */
TEST(layouts_probe_finds_the_regions_that_matter)
{
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .no_khugepaged = 1, .layout_seed = SEED,
				 .layouts = NLAYOUTS };
	struct replay_result r;
	char err[1024];

	for (int aligned = 0; aligned < 2; aligned++) {
		const uint64_t at = aligned ? 0x7f0000200000ULL : 0x7f0000201000ULL;

		lbegin("probe", "always", 0x555555659000ULL);
		lsys(9, (int64_t)at, 0, MB(4), RW, ANON_PRIVATE);
		lwrite(at, MB(4));
		trace_write_exit(&W, 0);
		ASSERT_OK(trace_writer_close(&W));
		ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
		ASSERT(r.ranges);
		if (aligned) {
			ASSERT_EQ(r.ranges->sensitive, 0);
			ASSERT(r.ranges->n == 1 && r.ranges->fixed[0]);
		} else {
			ASSERT_EQ(r.ranges->sensitive, REPLAY_REGION_MMAP);
			ASSERT(r.ranges->n == NLAYOUTS && !r.ranges->fixed[0]);
			ASSERT_EQ(r.ranges->made, NLAYOUTS);
		}
		replay_result_free(&r);
		/* under a memory limit a page table more or less (which a shift
		 * can make) may decide a fallback or a kill: every layout is run */
		o.limit_set = 1;
		o.memory_max = 1ULL << 30;
		o.memory_high = THPS_MEMCG_NOLIMIT;
		ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
		ASSERT(r.ranges && r.ranges->n == NLAYOUTS && r.ranges->made == NLAYOUTS);
		replay_result_free(&r);
		o.limit_set = 0;
		unlink(P);
	}
}

/*
 * Where only the heap's place matters (the brk heap of the first test,
 * MADV_HUGEPAGE on each jump), a layout whose heap falls in the class of
 * an earlier one's is not run but given that one's figures.  Each such
 * layout replayed alone gives exactly the figures it was given.
 */
TEST(layouts_the_same_heap_class_is_replayed_once)
{
	const uint64_t heap = 0x555555659000ULL;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .no_khugepaged = 1,
				 .layout_seed = SEED, .layouts = NLAYOUTS };
	struct replay_result r;
	int copies = 0;
	char err[1024];

	brk_trace("same-heap", heap, 0);
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->n == NLAYOUTS && r.ranges->phases == 1);
	ASSERT_EQ(r.ranges->sensitive, REPLAY_REGION_BRK);
	ASSERT(r.ranges->same_as && r.ranges->heap_classes > 0);
	for (int k = 1; k < NLAYOUTS; k++) {
		struct replay_opts ok = o;
		struct replay_result one;
		int src = r.ranges->same_as[k];

		if (src < 0)
			continue;
		copies++;
		ASSERT(src < k && r.ranges->same_as[src] < 0);
		ok.layout = k;
		ok.heap_chosen = r.ranges->heap_shift[k] >= 0;
		ok.heap_shift = r.ranges->heap_shift[k];
		ASSERT_OK(replay_run(P, &ok, &one, err, sizeof(err)));
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_final_AnonHugePages * NLAYOUTS + k],
			  one.final_meminfo[THPS_MEM_AnonHugePages]);
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_final_AnonPages * NLAYOUTS + k],
			  one.final_meminfo[THPS_MEM_AnonPages]);
		ASSERT_EQ(one.mms[one.nmms - 1]->final[THPS_PROC_AnonHugePages],
			  brk_expected_kb(heap + (uint64_t)r.ranges->heap_shift[k] % HPAGE));
		replay_result_free(&one);
	}
	ASSERT(copies > 0);
	ASSERT_EQ(r.ranges->made, NLAYOUTS - copies);
	replay_result_free(&r);
	unlink(P);
}

/*
 * Where only the mmap base's place matters (one mapping 4 KiB past a 2 MiB
 * boundary, 8 MiB and 12 KiB long, not a 2 MiB multiple, so no kernel
 * aligns it, written through under always), its two ends make classes of
 * offset (4: each end's shift onto 2 MiB and the next): the layouts in a
 * class are replayed once, and each copied layout replayed alone gives
 * exactly the figures it was given.  Its THPs: the 2 MiB blocks wholly
 * inside, 4 when its start is on a boundary or 1 to 3 pages short of one
 * (the mapping has 3 pages more than 4 blocks), else 3.
 */
TEST(layouts_the_same_mmap_class_is_replayed_once)
{
	const uint64_t at = 0x7f0000201000ULL, len = MB(8) + 3 * 4096;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .no_khugepaged = 1,
				 .layout_seed = SEED, .layouts = NLAYOUTS };
	struct replay_result r;
	int copies = 0, seen[2] = { 0, 0 };
	char err[1024];

	lbegin("same-mmap", "always", 0x555555659000ULL);
	lsys(9, (int64_t)at, 0, (int64_t)len, RW, ANON_PRIVATE);
	lwrite(at, len);
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	ASSERT_OK(replay_run_layouts(P, &o, 2, &r, err, sizeof(err)));
	ASSERT(r.ranges && r.ranges->n == NLAYOUTS && r.ranges->phases == 1);
	ASSERT_EQ(r.ranges->sensitive, REPLAY_REGION_MMAP);
	ASSERT_EQ(r.ranges->mmap_classes, 4);
	ASSERT(r.ranges->same_as);
	ASSERT_EQ(r.ranges->made, 4);
	for (int k = 0; k < NLAYOUTS; k++) {
		struct replay_opts ok = o;
		struct replay_result one;
		int src = r.ranges->same_as[k];
		uint64_t ahp = r.ranges->machine[(size_t)RANGE_peak_AnonHugePages * NLAYOUTS + k];
		/* the mapping's first page, this many pages past a boundary */
		int64_t down = k ? r.ranges->mmap_shift[k] : 0;
		uint64_t off = ((at - (uint64_t)down) % HPAGE) / 4096;

		ASSERT(down >= 0);
		ASSERT_EQ(ahp, (off == 0 || off >= 509 ? 4 : 3) * 2048);
		seen[ahp == 3 * 2048] = 1;
		if (src < 0)
			continue;
		copies++;
		ASSERT(src < k && r.ranges->same_as[src] < 0);
		ok.layout = k;
		ok.mmap_chosen = 1;
		ok.mmap_shift = r.ranges->mmap_shift[k];
		ASSERT_OK(replay_run(P, &ok, &one, err, sizeof(err)));
		ASSERT_EQ(ahp, one.peak_meminfo_huge_kb);
		ASSERT_EQ(r.ranges->machine[(size_t)RANGE_peak_AnonPages * NLAYOUTS + k],
			  one.peak_anon_pages_kb);
		replay_result_free(&one);
	}
	ASSERT(seen[0] && seen[1]); /* both figures seen */
	ASSERT_EQ(copies, NLAYOUTS - 4);
	replay_result_free(&r);
	unlink(P);
}
