/*
 * bench_record.c - the recorder's and the replay's part of "thpsim bench".
 *
 *  - replay speed: synthetic traces of a program streaming through 1 GiB
 *    (a read every 4 KiB, eight rounds of mmap and munmap; then one round of
 *    reads and writes), written to a temporary file and replayed under THP
 *    never (every record a 4 KiB fault) and THP always.  Trace records per
 *    second on one core.  The reads and writes again in eight rounds of
 *    128 MiB: the same records, but the frames munmap frees are used again,
 *    where the single round gives every page a frame (and its metadata) the
 *    process never used before.
 *  - khugepaged's cost: the same traces under THP always with khugepaged on
 *    and off, in turns; the records carry a clock (1 us a record, TIME
 *    records every 100 us as the recorder writes them) and the header a
 *    khugepaged waking every 10 ms of it, a thousand times the default
 *    rate, so that every wake-up's scan is paid many times over.
 *  - multi-size THP's cost: the same traces with the PMD size off and
 *    64 KiB folios on and off, in turns.
 *  - recording overhead (root and tracepoints only): the cover letter's
 *    program (tests/progs, 51 200 faults in a few tens of ms) run bare,
 *    under "thpsim record", and under "perf record" of the same
 *    tracepoints; the median of several runs of each, as ratios to the bare
 *    run.  Then record --access (DAMON access samples, 100 ms) against
 *    plain record of hotcold (tests/progs: 32 MiB written, then passes over
 *    8 MiB of it, as many as take about a second bare), in turns, where
 *    DAMON vaddr can be used (the goal: at most 1.3x).
 *
 * Printed, never asserted: the machines are shared and noisy.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_record.h"
#include "replay_out.h"
#include "record/record.h"
#include "replay/replay.h"
#include "trace/trace.h"

/* rounds x (a read every step bytes [then a write to each]; writes 2: the
 * writes alone) over mib MiB, with mmap/munmap, at 0x7f0000000000 + off
 * (off 0: a 2 MiB boundary, where 6.12+ put a mapping of a 2 MiB multiple;
 * off 4096 with a length 8 KiB short: a mapping the mmap base places). */
static int write_bench_trace_at(const char *path, uint64_t mib, int rounds, int writes,
				uint64_t step, uint64_t off, uint64_t *records)
{
	struct trace_writer w;
	struct trace_header h = { 0 };
	const uint64_t base = 0x7f0000000000ULL + off, len = (mib << 20) - 2 * off;
	uint64_t args[6] = { 0, len, 3, 0x22, (uint64_t)-1, 0 };
	int err;

	uint64_t t_ns = 0;

	trace_header_add(&h, "transparent_hugepage/enabled", "madvise");
	trace_header_add(&h, "transparent_hugepage/khugepaged/scan_sleep_millisecs", "10");
	trace_header_add(&h, "transparent_hugepage/khugepaged/pages_to_scan", "4096");
	err = trace_writer_open(&w, path, &h);
	if (err)
		return err;
	trace_write_proc(&w, 1);
	trace_write_exec(&w, "/bench", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	for (int r = 0; r < rounds; r++) {
		trace_write_syscall(&w, 9, 6, args, (int64_t)base);
		for (uint64_t a = base; writes != 2 && a < base + len; a += step) {
			trace_write_time(&w, t_ns += 1000, 100000);
			trace_write_fault(&w, a, 0, 0);
		}
		for (uint64_t a = base; writes && a < base + len; a += step) {
			trace_write_time(&w, t_ns += 1000, 100000);
			trace_write_fault(&w, a, 1, 0);
		}
		args[0] = base;
		trace_write_syscall(&w, 11, 2, args, 0);
		args[0] = 0;
	}
	trace_write_exit(&w, 0);
	*records = w.nrecords + 1;
	return trace_writer_close(&w);
}

static int write_bench_trace_step(const char *path, uint64_t mib, int rounds, int writes,
				  uint64_t step, uint64_t *records)
{
	return write_bench_trace_at(path, mib, rounds, writes, step, 0, records);
}

static int write_bench_trace(const char *path, uint64_t mib, int rounds, int writes,
			     uint64_t *records)
{
	return write_bench_trace_step(path, mib, rounds, writes, 4096, records);
}

/*
 * A program of many small mappings and processes, the measures' worst
 * case (each call that frees memory, each mapping and each exit is work
 * for them): 8 processes, each forked by the last, each doing 200 rounds
 * of an anonymous mmap of 256 KiB written whole, the munmap of the one
 * two rounds before, and every 4th round 128 KiB more brk heap written
 * and MADV_DONTNEED of half the newest mapping.
 */
static int write_churn_trace(const char *path, uint64_t *records)
{
	struct trace_writer w;
	struct trace_header h = { 0 };
	const uint64_t heap = 0x555555a00000ULL, len = 256 << 10;
	uint64_t brk = heap, t_ns = 0, next = 0x7f0000000000ULL, addr[200];
	int err;

	trace_header_add(&h, "transparent_hugepage/enabled", "madvise");
	err = trace_writer_open(&w, path, &h);
	if (err)
		return err;
	trace_write_proc(&w, 1);
	trace_write_exec(&w, "/bench", heap, heap, 8 << 20);
	for (int p = 0; p < 8; p++) {
		for (int r = 0; r < 200; r++) {
			uint64_t a[6] = { 0, len, 3, 0x22, (uint64_t)-1, 0 };

			addr[r] = next;
			next += len + 4096;
			trace_write_syscall(&w, 9, 6, a, (int64_t)addr[r]);
			for (uint64_t o = 0; o < len; o += 4096) {
				trace_write_time(&w, t_ns += 1000, 100000);
				trace_write_fault(&w, addr[r] + o, 1, 0);
			}
			if (r >= 2) {
				uint64_t u[6] = { addr[r - 2], len, 0, 0, 0, 0 };

				trace_write_syscall(&w, 11, 2, u, 0);
			}
			if (r % 4 == 3) {
				uint64_t b[6] = { brk + (128 << 10), 0, 0, 0, 0, 0 };
				uint64_t d[6] = { addr[r], len / 2, 4, 0, 0, 0 };

				trace_write_syscall(&w, 12, 1, b, (int64_t)(brk + (128 << 10)));
				for (uint64_t o = 0; o < (128 << 10); o += 4096)
					trace_write_fault(&w, brk + o, 1, 0);
				brk += 128 << 10;
				trace_write_syscall(&w, 28, 3, d, 0);
			}
		}
		trace_write_fork(&w, p + 2, 0x1200011);
		trace_write_exit(&w, 0);
		trace_write_proc(&w, p + 2);
	}
	trace_write_exit(&w, 0);
	*records = w.nrecords + 1;
	return trace_writer_close(&w);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Replay the trace REPLAY_RUNS times; r[0] gets the median rate in records
 * per CPU-second of this thread (the replay runs on the calling thread, so
 * this is its speed on one core, whatever else the host runs), r[1] the
 * median per wall-clock second.  0 on failure.
 */
#define REPLAY_RUNS 5
#define REPLAY_GOAL 20e6 /* records per second on one core */
#define KHUG_GOAL 0.8    /* replay speed, khugepaged on over off */
#define MTHP_GOAL 0.8    /* replay speed, 64 KiB folios on over off */
#define MEASURES_GOAL 0.7 /* replay speed, every measure over figures and series alone */

/* What one replay runs under: transparent_hugepage/enabled, one more knob
 * (or none), khugepaged off. */
struct replay_cfg {
	const char *enabled;
	const char *knob, *value;
	int no_khugepaged;
	int figures_only;  /* the figures and series measures alone */
	uint64_t memory_max; /* --memory-max; 0: none */
};

static double replay_once(const char *path, const struct replay_cfg *c, uint64_t *records,
			  double *wall, uint64_t *wakeups)
{
	struct replay_opts o = { 0 };
	struct replay_result res;
	char err[1024];
	double c0, w0, cpu;

	knob_sets_add_pair(&o.knobs, "transparent_hugepage/enabled", c->enabled);
	if (c->knob)
		knob_sets_add_pair(&o.knobs, c->knob, c->value);
	o.ram_bytes = 4ULL << 30;
	o.no_khugepaged = c->no_khugepaged;
	o.figures_only = c->figures_only;
	if (c->memory_max) {
		o.limit_set = 1;
		o.memory_max = c->memory_max;
		o.memory_high = THPS_MEMCG_NOLIMIT;
	}
	c0 = bench_thread_cpu();
	w0 = bench_now();
	if (replay_run(path, &o, &res, err, sizeof(err))) {
		fprintf(stderr, "thpsim bench: replay: %s\n", err);
		replay_result_free(&res);
		return -1;
	}
	cpu = bench_thread_cpu() - c0;
	if (wall)
		*wall = bench_now() - w0;
	*records = res.records;
	if (wakeups)
		*wakeups = res.khugepaged_wakeups;
	replay_result_free(&res);
	return cpu;
}

/* Two configurations replayed in turns (a slow moment of the host falls on
 * both): their median CPU rates and the ratio of the first to the second. */
static void ratio_in_turns(const char *path, const struct replay_cfg *a,
			   const struct replay_cfg *b, double *ra, double *rb, double *ratio,
			   uint64_t *wakeups)
{
	double c_a[REPLAY_RUNS], c_b[REPLAY_RUNS];
	uint64_t records = 0;

	*ra = *rb = *ratio = 0;
	for (int i = 0; i < REPLAY_RUNS; i++) {
		c_a[i] = replay_once(path, a, &records, NULL, wakeups);
		c_b[i] = replay_once(path, b, &records, NULL, NULL);
		if (c_a[i] <= 0 || c_b[i] <= 0)
			return;
	}
	qsort(c_a, REPLAY_RUNS, sizeof(c_a[0]), cmp_double);
	qsort(c_b, REPLAY_RUNS, sizeof(c_b[0]), cmp_double);
	*ra = (double)records / c_a[REPLAY_RUNS / 2];
	*rb = (double)records / c_b[REPLAY_RUNS / 2];
	*ratio = *ra / *rb;
}

/* THP always, khugepaged on and off. */
static void khug_ratio(const char *path, double *on, double *off, double *ratio,
		       uint64_t *wakeups)
{
	static const struct replay_cfg on_cfg = { "always", NULL, NULL, 0, 0, 0 },
					off_cfg = { "always", NULL, NULL, 1, 0, 0 };

	ratio_in_turns(path, &on_cfg, &off_cfg, on, off, ratio, wakeups);
}

/* The PMD size off, 64 KiB folios on and off. */
static void mthp_ratio(const char *path, double *on, double *off, double *ratio)
{
	static const struct replay_cfg on_cfg = { "never",
						  "transparent_hugepage/hugepages-64kB/enabled",
						  "always", 0, 0, 0 },
					off_cfg = { "never", NULL, NULL, 0, 0, 0 };

	ratio_in_turns(path, &on_cfg, &off_cfg, on, off, ratio, NULL);
}

/* THP always, every measure against the figures and series alone. */
static void measures_ratio(const char *path, double *all, double *figs, double *ratio)
{
	static const struct replay_cfg all_cfg = { "always", NULL, NULL, 0, 0, 0 },
					figs_cfg = { "always", NULL, NULL, 0, 1, 0 };

	ratio_in_turns(path, &all_cfg, &figs_cfg, all, figs, ratio, NULL);
}

/*
 * THP always with max_ptes_none 409, with a memory.max against none: one
 * above anything the trace takes (the cost of the limit's bookkeeping), and
 * a quarter of what it takes, where reclaim splits its underused THPs every
 * few hundred faults (the cost of the work the kernel does there too:
 * splits, zero pages mapped, pages freed).
 */
static void limit_ratio(const char *path, struct bench_record *b)
{
	static const uint64_t limits[2] = { 64ULL << 30, 256ULL << 20 };

	for (int i = 0; i < 2; i++) {
		const struct replay_cfg on_cfg = { "always",
						   "transparent_hugepage/khugepaged/max_ptes_none",
						   "409", 1, 0, limits[i] },
					off_cfg = { "always",
						    "transparent_hugepage/khugepaged/max_ptes_none",
						    "409", 1, 0, 0 };
		struct replay_opts o = { .ram_bytes = 4ULL << 30, .no_khugepaged = 1, .limit_set = 1,
					 .memory_max = limits[i],
					 .memory_high = THPS_MEMCG_NOLIMIT };
		struct replay_result res;
		char err[1024];

		ratio_in_turns(path, &on_cfg, &off_cfg, &b->limit_on[i], &b->limit_off[i],
			       &b->limit_ratio[i], NULL);
		/* what the limit did: a replay that a kill cut short would be
		 * fast for the wrong reason */
		knob_sets_add_pair(&o.knobs, "transparent_hugepage/enabled", on_cfg.enabled);
		knob_sets_add_pair(&o.knobs, on_cfg.knob, on_cfg.value);
		if (replay_run(path, &o, &res, err, sizeof(err)) == 0) {
			b->limit_kills[i] = (uint64_t)res.oom_kills;
			b->limit_splits[i] = res.vm[THPS_VM_thp_underused_split_page];
		}
		replay_result_free(&res);
	}
}

static double process_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The layouts (thpsim replay's default count, THP always) against the
 * same number of replays one after another, in turns, medians of
 * LAYOUT_RUNS: what replaying every layout costs over replaying the trace
 * once per layout, and how much of it is the CPUs.
 */
#define LAYOUT_RUNS 3
static void layouts_cost(const char *path, struct bench_record *b, int c)
{
	double lw[LAYOUT_RUNS], lc[LAYOUT_RUNS], sw[LAYOUT_RUNS], sc[LAYOUT_RUNS];
	struct replay_opts o = { .ram_bytes = 4ULL << 30, .layout_seed = 1 };
	struct replay_result res;
	char err[1024];

	knob_sets_add_pair(&o.knobs, "transparent_hugepage/enabled", "always");
	b->layouts_n = REPLAY_LAYOUTS_DEFAULT;
	o.layouts = b->layouts_n;
	b->layouts_ncpu = replay_threads();
	for (int i = 0; i < LAYOUT_RUNS; i++) {
		double w0 = bench_now(), c0 = process_cpu();
		int phases;

		if (replay_run_layouts(path, &o, b->layouts_ncpu, &res, err, sizeof(err))) {
			fprintf(stderr, "thpsim bench: replay: %s\n", err);
			return;
		}
		lw[i] = bench_now() - w0;
		lc[i] = process_cpu() - c0;
		phases = res.ranges ? res.ranges->phases : 1;
		b->layouts_made[c] = res.ranges ? res.ranges->made : 1;
		replay_result_free(&res);
		/* the other way: the trace replayed once per layout asked for
		 * (and per khugepaged phase), every one */
		b->layouts_replays[c] = b->layouts_n * phases;
		w0 = bench_now();
		c0 = process_cpu();
		for (int k = 0; k < b->layouts_replays[c]; k++) {
			struct replay_opts ok = o;

			ok.layout = k % b->layouts_n;
			if (replay_run(path, &ok, &res, err, sizeof(err)))
				return;
			replay_result_free(&res);
		}
		sw[i] = bench_now() - w0;
		sc[i] = process_cpu() - c0;
	}
	qsort(lw, LAYOUT_RUNS, sizeof(double), cmp_double);
	qsort(lc, LAYOUT_RUNS, sizeof(double), cmp_double);
	qsort(sw, LAYOUT_RUNS, sizeof(double), cmp_double);
	qsort(sc, LAYOUT_RUNS, sizeof(double), cmp_double);
	b->layouts_wall[c] = lw[LAYOUT_RUNS / 2];
	b->layouts_cpu[c] = lc[LAYOUT_RUNS / 2];
	b->seq_wall[c] = sw[LAYOUT_RUNS / 2];
	b->seq_cpu[c] = sc[LAYOUT_RUNS / 2];
}

static void replay_rate(const char *path, const char *enabled, uint64_t *records, double r[2])
{
	const struct replay_cfg c = { enabled, NULL, NULL, 0, 0, 0 };
	double cpu[REPLAY_RUNS], wall[REPLAY_RUNS];

	r[0] = r[1] = 0;
	for (int i = 0; i < REPLAY_RUNS; i++)
		if ((cpu[i] = replay_once(path, &c, records, &wall[i], NULL)) < 0)
			return;
	qsort(cpu, REPLAY_RUNS, sizeof(cpu[0]), cmp_double);
	qsort(wall, REPLAY_RUNS, sizeof(wall[0]), cmp_double);
	r[0] = (double)*records / cpu[REPLAY_RUNS / 2];
	r[1] = (double)*records / wall[REPLAY_RUNS / 2];
}

/* ---- recording overhead ---- */
static int self_dir(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	out[n] = 0;
	slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

/* Wall time of running argv, output discarded; < 0 on failure. */
static double run_timed(char *const argv[])
{
	double t0 = bench_now();
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	return bench_now() - t0;
}

static double median_of(char *const argv[], int n)
{
	double t[16];

	for (int i = 0; i < n; i++)
		if ((t[i] = run_timed(argv)) < 0)
			return -1;
	qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
	return t[n / 2];
}

/*
 * record --access against record of hotcold doing a set amount of work
 * (passes over its hot 8 MiB, as many as take about 1 s bare, so that
 * DAMON takes ten samples or so), three of each in turns; skipped, saying
 * why, where DAMON vaddr cannot be used (it is set up and undone to find
 * out; someone else's kdamond is left alone).
 */
static void access_overhead(struct bench_record *b, const char *dir, char *self, char *trace)
{
	char prog[PATH_MAX + 32], passes[32], why[512];
	char *bare[] = { prog, "--passes", passes, NULL };
	char *plain[] = { self, "record", "-q", "--force", "-o", trace, "--", prog, "--passes",
			  passes, NULL };
	char *acc[] = { self, "record", "-q", "--access", "--force", "-o", trace, "--", prog,
			"--passes", passes, NULL };
	double t[2][3], probe;
	struct rec_damon d;

	snprintf(prog, sizeof(prog), "%s/progs/hotcold", dir);
	if (access(prog, X_OK)) {
		snprintf(b->access_skipped, sizeof(b->access_skipped),
			 "%.400s is not built (make progs)", prog);
		return;
	}
	if (rec_damon_prepare(&d, NULL, REC_ACCESS_MS_DEFAULT * 1000, why, sizeof(why))) {
		snprintf(b->access_skipped, sizeof(b->access_skipped), "%s", why);
		b->access_no_damon = 1;
		return;
	}
	rec_damon_stop(&d);
	/* passes that take about a second bare: 100 timed, then scaled */
	snprintf(passes, sizeof(passes), "100");
	probe = run_timed(bare);
	b->access_passes = probe > 0 ? (unsigned long)(100 / probe) : 1000;
	if (b->access_passes < 100)
		b->access_passes = 100;
	snprintf(passes, sizeof(passes), "%lu", b->access_passes);
	b->access_bare_s = run_timed(bare);
	for (int i = 0; i < 3; i++) {
		t[0][i] = run_timed(plain);
		t[1][i] = run_timed(acc);
		if (t[0][i] < 0 || t[1][i] < 0) {
			snprintf(b->access_skipped, sizeof(b->access_skipped), "a run failed");
			unlink(trace);
			return;
		}
	}
	unlink(trace);
	qsort(t[0], 3, sizeof(double), cmp_double);
	qsort(t[1], 3, sizeof(double), cmp_double);
	b->access_plain_s = t[0][1];
	b->access_s = t[1][1];
}

static int have_perf(void)
{
	char *argv[] = { "perf", "--version", NULL };

	return run_timed(argv) >= 0;
}

void bench_record_collect(struct bench_record *b)
{
	char dir[PATH_MAX], prog[PATH_MAX + 32], self[PATH_MAX + 16], trace[64], perfdata[64],
		why[512];
	struct rec_perf pp;
	uint64_t recs;

	memset(b, 0, sizeof(*b));
	snprintf(trace, sizeof(trace), "/tmp/thpsim-bench-%d.trace", (int)getpid());
	snprintf(perfdata, sizeof(perfdata), "/tmp/thpsim-bench-%d.perf", (int)getpid());

	/* replay speed: first reads only; reads and writes over 1 GiB at once, then
	 * in eight rounds of 128 MiB */
	if (write_bench_trace(trace, 1024, 8, 0, &recs) == 0) {
		replay_rate(trace, "never", &b->replay_records, b->replay_never);
		replay_rate(trace, "always", &recs, b->replay_always);
		khug_ratio(trace, &b->khug_on[0], &b->khug_off[0], &b->khug_ratio[0],
			   &b->khug_wakeups[0]);
		mthp_ratio(trace, &b->mthp_on[0], &b->mthp_off[0], &b->mthp_ratio[0]);
	}
	if (write_bench_trace(trace, 1024, 1, 1, &recs) == 0) {
		replay_rate(trace, "never", &b->replay_rw_records, b->replay_rw_never);
		replay_rate(trace, "always", &recs, b->replay_rw_always);
		khug_ratio(trace, &b->khug_on[1], &b->khug_off[1], &b->khug_ratio[1],
			   &b->khug_wakeups[1]);
		mthp_ratio(trace, &b->mthp_on[1], &b->mthp_off[1], &b->mthp_ratio[1]);
		measures_ratio(trace, &b->meas_all[0], &b->meas_figs[0], &b->meas_ratio[0]);
		layouts_cost(trace, b, 0);
	}
	if (write_bench_trace_at(trace, 1024, 1, 1, 4096, 4096, &recs) == 0)
		layouts_cost(trace, b, 1);
	/* one byte every 64 KiB: 32 pages of each 2 MiB, underused THPs */
	if (write_bench_trace_step(trace, 1024, 8, 2, 64 << 10, &recs) == 0)
		limit_ratio(trace, b);
	if (write_churn_trace(trace, &recs) == 0)
		measures_ratio(trace, &b->meas_all[1], &b->meas_figs[1], &b->meas_ratio[1]);
	if (write_bench_trace(trace, 128, 8, 1, &recs) == 0) {
		replay_rate(trace, "never", &b->replay_reuse_records, b->replay_reuse_never);
		replay_rate(trace, "always", &recs, b->replay_reuse_always);
		khug_ratio(trace, &b->khug_on[2], &b->khug_off[2], &b->khug_ratio[2],
			   &b->khug_wakeups[2]);
		mthp_ratio(trace, &b->mthp_on[2], &b->mthp_off[2], &b->mthp_ratio[2]);
	}
	unlink(trace);

	/* recording overhead */
	if (geteuid() != 0) {
		snprintf(b->record_skipped, sizeof(b->record_skipped), "not root");
		return;
	}
	if (rec_tracing_setup(&pp, why, sizeof(why))) {
		snprintf(b->record_skipped, sizeof(b->record_skipped), "%s", why);
		return;
	}
	if (self_dir(dir, sizeof(dir))) {
		snprintf(b->record_skipped, sizeof(b->record_skipped), "cannot find thpsim's directory");
		return;
	}
	snprintf(prog, sizeof(prog), "%s/progs/coverletter", dir);
	snprintf(self, sizeof(self), "%s/thpsim", dir);
	if (access(prog, X_OK)) {
		snprintf(b->record_skipped, sizeof(b->record_skipped),
			 "%.400s is not built (make progs)", prog);
		return;
	}
	{
		char *bare[] = { prog, NULL };
		char *rec[] = { self, "record", "-q", "--force", "-o", trace, "--", prog, NULL };
		char *perf[] = { "perf", "record", "-q", "-o", perfdata,
				 "-e", "exceptions:page_fault_user", "-e", "exceptions:page_fault_kernel",
				 "-e", "raw_syscalls:sys_enter", "-e", "raw_syscalls:sys_exit",
				 "-e", "task:task_newtask", "-e", "sched:sched_process_exec",
				 "-e", "sched:sched_process_exit", "--", prog, NULL };

		run_timed(bare); /* warm the page cache */
		b->bare_s = median_of(bare, 7);
		b->record_s = median_of(rec, 7);
		if (have_perf())
			b->perf_s = median_of(perf, 7);
		else
			snprintf(b->perf_skipped, sizeof(b->perf_skipped), "perf is not installed");
	}
	unlink(trace);
	unlink(perfdata);
	b->record_ran = b->bare_s > 0 && b->record_s > 0;
	access_overhead(b, dir, self, trace);
}

static void replay_line(const char *what, uint64_t records, const double never[2],
			const double always[2])
{
	printf("  %-18s %8llu records: THP never %6.1f M/s %-4s always %6.1f M/s %-4s"
	       " (wall: %.1f, %.1f)\n",
	       what, (unsigned long long)records, never[0] / 1e6,
	       never[0] >= REPLAY_GOAL ? "" : "<", always[0] / 1e6,
	       always[0] >= REPLAY_GOAL ? "" : "<", never[1] / 1e6, always[1] / 1e6);
}

/* An on/off comparison over the three traces, as JSON (wakeups may be NULL). */
static void ratio_json(struct json *j, const char *name, const double on[3], const double off[3],
		       const double ratio[3], const uint64_t *wakeups)
{
	static const char *const names[] = { "read", "read_write", "read_write_8x128MiB" };

	json_begin_array(j, name);
	for (int t = 0; t < 3; t++) {
		json_begin_object(j, NULL);
		json_string(j, "trace", names[t]);
		json_double(j, "records_per_s_on", on[t]);
		json_double(j, "records_per_s_off", off[t]);
		json_double(j, "ratio", ratio[t]);
		if (wakeups)
			json_uint(j, "wakeups", wakeups[t]);
		json_end_object(j);
	}
	json_end_array(j);
}

/* ...and as text, '<' marking a ratio below goal. */
static void ratio_lines(const double on[3], const double off[3], const double ratio[3],
			const uint64_t *wakeups, double goal)
{
	static const char *const names[] = { "first reads", "reads then writes", "  8 x 128 MiB" };

	for (int t = 0; t < 3; t++) {
		printf("  %-18s on %6.1f M/s  off %6.1f M/s  %.2fx %-2s", names[t], on[t] / 1e6,
		       off[t] / 1e6, ratio[t], ratio[t] >= goal ? "" : "<");
		if (wakeups)
			printf(" (%llu wake-ups)", (unsigned long long)wakeups[t]);
		printf("\n");
	}
}

/* The recording overhead: text lines. */
static void record_lines(const struct bench_record *b)
{
	printf("recording overhead (the cover letter's program, median of 7 runs):\n");
	if (!b->record_ran) {
		printf("  skipped: %s\n", b->record_skipped[0] ? b->record_skipped : "a run failed");
		return;
	}
	printf("  bare run                 %8.3f s\n", b->bare_s);
	printf("  thpsim record            %8.3f s  %5.2fx the bare run\n", b->record_s,
	       b->record_s / b->bare_s);
	if (b->perf_s > 0)
		printf("  perf record (same tracepoints) %8.3f s  %5.2fx the bare run\n", b->perf_s,
		       b->perf_s / b->bare_s);
	else
		printf("  perf record: skipped: %s\n", b->perf_skipped);
}

/* record --access over record: text lines. */
static void access_lines(const struct bench_record *b)
{
	printf("recording with access samples (hotcold, 32 MiB then passes over 8 MiB; median "
	       "of 3 in turns):\n");
	if (b->access_s <= 0) {
		printf("  thpsim record --access: skipped: %s\n",
		       b->access_skipped[0] ? b->access_skipped
		       : b->record_skipped[0] ? b->record_skipped : "not measured");
		if (b->access_no_damon)
			printf("  (a guest of Debian's 6.12 can time it: tools/kernels/extra/bench.sh, "
			       "docs/performance.md)\n");
		return;
	}
	printf("  bare run, %lu passes      %8.3f s\n", b->access_passes, b->access_bare_s);
	printf("  thpsim record            %8.3f s\n", b->access_plain_s);
	printf("  thpsim record --access   %8.3f s  %5.2fx thpsim record (goal: at most 1.3x)\n",
	       b->access_s, b->access_s / b->access_plain_s);
}

/* The same as members of j. */
static void access_json(const struct bench_record *b, struct json *j)
{
	json_begin_object(j, "record_access_overhead");
	if (b->access_s <= 0) {
		json_string(j, "skipped", b->access_skipped[0] ? b->access_skipped
					  : b->record_skipped[0] ? b->record_skipped : "not measured");
	} else {
		json_string(j, "program", "hotcold (32 MiB, then passes over 8 MiB)");
		json_uint(j, "passes", b->access_passes);
		json_double(j, "bare_s", b->access_bare_s);
		json_double(j, "thpsim_record_s", b->access_plain_s);
		json_double(j, "thpsim_record_access_s", b->access_s);
		json_double(j, "ratio", b->access_s / b->access_plain_s);
		json_double(j, "goal_ratio", 1.3);
	}
	json_end_object(j);
}

void bench_record_print(const struct bench_record *b, struct json *j)
{
	if (j) {
		json_begin_object(j, "replay");
		json_string(j, "basis", "records per CPU-second of the replaying thread "
					"(one core); _wall: per wall-clock second; medians of "
					"5 runs");
		json_double(j, "goal_records_per_s", REPLAY_GOAL);
		json_uint(j, "read_records", b->replay_records);
		json_double(j, "read_records_per_s_thp_never", b->replay_never[0]);
		json_double(j, "read_records_per_s_thp_always", b->replay_always[0]);
		json_double(j, "read_records_per_s_thp_never_wall", b->replay_never[1]);
		json_double(j, "read_records_per_s_thp_always_wall", b->replay_always[1]);
		json_uint(j, "read_write_records", b->replay_rw_records);
		json_double(j, "read_write_records_per_s_thp_never", b->replay_rw_never[0]);
		json_double(j, "read_write_records_per_s_thp_always", b->replay_rw_always[0]);
		json_double(j, "read_write_records_per_s_thp_never_wall", b->replay_rw_never[1]);
		json_double(j, "read_write_records_per_s_thp_always_wall", b->replay_rw_always[1]);
		json_uint(j, "read_write_8x128MiB_records", b->replay_reuse_records);
		json_double(j, "read_write_8x128MiB_records_per_s_thp_never",
			    b->replay_reuse_never[0]);
		json_double(j, "read_write_8x128MiB_records_per_s_thp_always",
			    b->replay_reuse_always[0]);
		json_double(j, "read_write_8x128MiB_records_per_s_thp_never_wall",
			    b->replay_reuse_never[1]);
		json_double(j, "read_write_8x128MiB_records_per_s_thp_always_wall",
			    b->replay_reuse_always[1]);
		ratio_json(j, "khugepaged_on_vs_off", b->khug_on, b->khug_off, b->khug_ratio,
			   b->khug_wakeups);
		json_double(j, "khugepaged_goal_ratio", KHUG_GOAL);
		ratio_json(j, "mthp_64k_on_vs_off", b->mthp_on, b->mthp_off, b->mthp_ratio, NULL);
		json_double(j, "mthp_goal_ratio", MTHP_GOAL);
		json_begin_array(j, "measures_all_vs_figures");
		for (int t = 0; t < 2; t++) {
			json_begin_object(j, NULL);
			json_string(j, "trace", t ? "churn_8_processes" : "read_write");
			json_double(j, "records_per_s_all", b->meas_all[t]);
			json_double(j, "records_per_s_figures", b->meas_figs[t]);
			json_double(j, "ratio", b->meas_ratio[t]);
			json_end_object(j);
		}
		json_end_array(j);
		json_double(j, "measures_goal_ratio", MEASURES_GOAL);
		json_begin_array(j, "memory_limit_vs_none");
		for (int i = 0; i < 2; i++) {
			json_begin_object(j, NULL);
			json_uint(j, "memory_max_MiB", i ? 256 : 64 << 10);
			json_double(j, "records_per_s_limit", b->limit_on[i]);
			json_double(j, "records_per_s_none", b->limit_off[i]);
			json_double(j, "ratio", b->limit_ratio[i]);
			json_double(j, "goal_ratio", 0.8);
			json_uint(j, "underused_splits", b->limit_splits[i]);
			json_uint(j, "oom_kills", b->limit_kills[i]);
			json_end_object(j);
		}
		json_end_array(j);
		json_begin_array(j, "layouts_vs_one_replay_per_layout");
		for (int c = 0; c < 2; c++) {
			json_begin_object(j, NULL);
			json_string(j, "trace", c ? "read_write, its mapping 4 KiB off a 2 MiB boundary"
						  : "read_write, its mapping on a 2 MiB boundary");
			json_int(j, "layouts", b->layouts_n);
			json_int(j, "replays_one_per_layout", b->layouts_replays[c]);
			json_int(j, "replays_made", b->layouts_made[c]);
			json_int(j, "cpus", b->layouts_ncpu);
			json_double(j, "layouts_wall_s", b->layouts_wall[c]);
			json_double(j, "layouts_cpu_s", b->layouts_cpu[c]);
			json_double(j, "one_per_layout_wall_s", b->seq_wall[c]);
			json_double(j, "one_per_layout_cpu_s", b->seq_cpu[c]);
			json_double(j, "speedup_wall",
				    b->layouts_wall[c] > 0 ? b->seq_wall[c] / b->layouts_wall[c] : 0);
			json_double(j, "goal_speedup_wall", 2.0);
			json_end_object(j);
		}
		json_end_array(j);
		json_end_object(j);
		json_begin_object(j, "record_overhead");
		if (!b->record_ran) {
			json_string(j, "skipped", b->record_skipped[0] ? b->record_skipped : "failed");
		} else {
			json_string(j, "program", "coverletter (200 MiB, a read every 4 KiB)");
			json_double(j, "bare_s", b->bare_s);
			json_double(j, "thpsim_record_s", b->record_s);
			json_double(j, "thpsim_record_ratio", b->record_s / b->bare_s);
			if (b->perf_s > 0) {
				json_double(j, "perf_record_s", b->perf_s);
				json_double(j, "perf_record_ratio", b->perf_s / b->bare_s);
			} else {
				json_string(j, "perf_record_skipped", b->perf_skipped);
			}
		}
		json_end_object(j);
		access_json(b, j);
		return;
	}
	printf("replay speed, one core (synthetic traces streaming through 1 GiB; records per\n"
	       "CPU-second of the replaying thread, median of %d runs; '<': below the goal, %.0f M/s):\n",
	       REPLAY_RUNS, REPLAY_GOAL / 1e6);
	replay_line("first reads", b->replay_records, b->replay_never, b->replay_always);
	replay_line("reads then writes", b->replay_rw_records, b->replay_rw_never,
		    b->replay_rw_always);
	replay_line("  8 x 128 MiB", b->replay_reuse_records, b->replay_reuse_never,
		    b->replay_reuse_always);
	if (b->replay_never[0] > 0 && b->replay_rw_never[0] > 0 && b->replay_reuse_never[0] > 0) {
		/* per page: one read record and one write record */
		double read_ns = 1e9 / b->replay_never[0];
		double write_ns = 2 * 1e9 / b->replay_rw_never[0] - read_ns;
		double reuse_ns = 2 * 1e9 / b->replay_reuse_never[0] - read_ns;

		printf("  (THP never: a first read maps the zero page, %.0f ns a record; a write\n"
		       "   after it copies on write, allocating a frame that munmap frees: %.0f ns,\n"
		       "   or %.0f ns when the frame was used before)\n",
		       read_ns, write_ns, reuse_ns);
	}
	printf("khugepaged on the trace's clock, THP always, a wake-up every 10 ms of trace time\n"
	       "(1 us a record): speed with it on over off, in turns, median of %d ('<': below %.1fx):\n",
	       REPLAY_RUNS, KHUG_GOAL);
	ratio_lines(b->khug_on, b->khug_off, b->khug_ratio, b->khug_wakeups, KHUG_GOAL);
	printf("64 KiB folios (hugepages-64kB/enabled=always, THP never for 2 MiB): speed with them\n"
	       "on over off, in turns, median of %d ('<': below %.1fx):\n", REPLAY_RUNS, MTHP_GOAL);
	ratio_lines(b->mthp_on, b->mthp_off, b->mthp_ratio, NULL, MTHP_GOAL);
	printf("the measures (attribution by mapping, work, occupancy and coverage), THP always:\n"
	       "speed with every measure over the figures and series alone, in turns, median of %d\n"
	       "('<': below %.1fx):\n", REPLAY_RUNS, MEASURES_GOAL);
	for (int t = 0; t < 2; t++)
		printf("  %-18s all %6.1f M/s  figures %6.1f M/s  %.2fx %s\n",
		       t ? "8 processes churn" : "reads then writes", b->meas_all[t] / 1e6,
		       b->meas_figs[t] / 1e6, b->meas_ratio[t], b->meas_ratio[t] >= MEASURES_GOAL ? "" : "<");
	printf("a memory limit (THP always, max_ptes_none 409; one byte every 64 KiB over 1 GiB,\n"
	       "8 rounds): speed with memory.max over without, in turns, median of %d:\n", REPLAY_RUNS);
	for (int i = 0; i < 2; i++)
		printf("  %-26s %6.1f M/s  none %6.1f M/s  %.2fx %s(goal 0.8x); %" PRIu64
		       " underused THPs split, %" PRIu64 " OOM kills\n",
		       i ? "256 MiB (reclaim splits)" : "64 GiB (never reached)", b->limit_on[i] / 1e6,
		       b->limit_off[i] / 1e6, b->limit_ratio[i], b->limit_ratio[i] >= 0.8 ? "" : "< ",
		       b->limit_splits[i], b->limit_kills[i]);
	printf("  (under 256 MiB the replay does what the kernel does there: the splits of 512\n"
	       "  pages, each page checked, the zero-filled ones mapped to the zero page and freed)\n");
	if (b->layouts_wall[0] > 0 || b->layouts_wall[1] > 0)
		printf("layouts (thpsim replay's default %d, THP always, the reads-then-writes trace),\n"
		       "against one replay per layout one after another ('<': under the goal, 2x):\n",
		       b->layouts_n);
	for (int c = 0; c < 2; c++) {
		double one = b->layouts_replays[c] ? b->seq_wall[c] / b->layouts_replays[c] : 0;

		if (b->layouts_wall[c] <= 0)
			continue;
		printf("  %s:\n    %d of %d replays made, on %d CPUs %.2f s wall (%.2f CPU-s); one per "
		       "layout\n    %.2f s wall (%.2f CPU-s): %.2fx faster %s; one replay %.3f s "
		       "(%.1f M records/s)\n",
		       c ? "its mapping 4 KiB off a 2 MiB boundary (every layout moves it)"
			 : "its mapping on a 2 MiB boundary (the kernel's, in every layout)",
		       b->layouts_made[c], b->layouts_replays[c], b->layouts_ncpu, b->layouts_wall[c],
		       b->layouts_cpu[c], b->seq_wall[c], b->seq_cpu[c],
		       b->seq_wall[c] / b->layouts_wall[c],
		       b->seq_wall[c] / b->layouts_wall[c] >= 2.0 ? "" : "<", one,
		       one > 0 ? (double)b->replay_rw_records / one / 1e6 : 0.0);
	}
	if (b->layouts_wall[1] > 0)
		printf("  (where no layout can move a mapping a THP could be in, one is made; where only\n"
		       "  the heap's or the mmap base's place can, one per class of its offset; where every\n"
		       "  layout is replayed the gain is the CPUs: the replays share only the trace file)\n");
	record_lines(b);
	access_lines(b);
}
