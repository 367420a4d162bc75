/*
 * soak.c - thpsim-soak, the differential soak, the metamorphic check,
 * failure injection and the threaded run (tests/fuzz/README.md).
 *
 *   thpsim-soak [--ops N] [--seed S] [options]     the differential soak
 *   thpsim-soak --replay FILE.ops...               run reproductions
 *   thpsim-soak --print-test FILE.ops [NAME]       one as a unit test
 *   thpsim-soak --inject [--sticky] FILE.ops...    fail every allocation in turn
 *   thpsim-soak --threads T [--ops N] [--seed S]   processes on threads
 *   thpsim-soak --make-corpus DIR N [--seed S]     random fuzzer inputs
 *
 * The soak is runs of random length, each on a fresh machine with its own
 * RAM and knobs (gen.c), every operation compared with the reference (diff.c).
 * One run in --metamorphic-every (picked by its seed) is instead one
 * knob-free sequence replayed under every THP setting and huge-zero-page
 * policy: each must read the same bytes and get the same answers.  A divergence is shrunk to a short
 * sequence, written as FILE.ops and printed as a unit test.  The soak ends
 * with "ops=N divergences=D seed=S".
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

struct opts {
	uint64_t ops, seed;
	int check_every, layout_every, meta_every, max_repros, threads;
	uint64_t first_run, runs; /* --first-run R --runs N: only those runs */
	int jobs, job;             /* --jobs J: J processes, job j runs j, j+J, ... */
	bool sticky, quiet, verbose;
	const char *out;
	double progress; /* seconds between progress lines, 0: none */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct diff_cfg run_cfg(const struct opts *o)
{
	return (struct diff_cfg){ .check_every = o->check_every, .layout_every = o->layout_every,
				  .isolation = true, .leak_check = true };
}

/* ---- shrinking ---- */
typedef bool (*still_fails_fn)(const struct op_list *l, void *arg);

/* Remove chunks of operations, halving the chunk size, while it still fails
 * (ddmin's complement-removal passes, greedy).  The RAM stays. */
static void shrink_ops(struct op_list *l, still_fails_fn fails, void *arg, double budget)
{
	double t0 = now();
	struct op_list t = { 0 };

	for (size_t chunk = l->n / 2 ? l->n / 2 : 1;; chunk /= 2) {
		for (size_t at = 0; at < l->n && now() - t0 < budget;) {
			size_t end = at + chunk < l->n ? at + chunk : l->n;

			t.n = 0;
			t.ram_mib = l->ram_mib;
			for (size_t i = 0; i < l->n; i++)
				if (i < at || i >= end)
					op_list_push(&t, &l->op[i]);
			if (t.n < l->n && fails(&t, arg)) {
				l->n = t.n;
				memcpy(l->op, t.op, t.n * sizeof(*t.op));
			} else {
				at = end;
			}
		}
		if (chunk == 1 || now() - t0 >= budget)
			break;
	}
	/* the RAM: the largest that still fails, to show memory is not the cause */
	for (uint64_t ram = 1024; ram > l->ram_mib && now() - t0 < budget; ram /= 2) {
		uint64_t keep = l->ram_mib;

		l->ram_mib = ram;
		if (fails(l, arg))
			break;
		l->ram_mib = keep;
	}
	op_list_free(&t);
}

struct diverges_arg {
	struct diff_cfg cfg;
};

/* Does the list still diverge?  In a child process: the model may abort on
 * one of its own assertions (VM_BUG_ON), which counts as diverging. */
static bool diverges(const struct op_list *l, void *arg)
{
	struct diverges_arg *a = arg;
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct diff d;
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 2); /* the model's BUG report, again and again */
		signal(SIGABRT, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		_exit(diff_run(l, &a->cfg, &d) ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return false;
	return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

/* A crash (the model's BUG) leaves the operations of the run behind. */
static const struct op_list *crash_ops;
static char crash_path[512], crash_tag[128];

static void on_crash(int sig)
{
	FILE *f = crash_path[0] ? fopen(crash_path, "w") : NULL;

	if (f && crash_ops) {
		ops_write(f, crash_ops, crash_tag);
		fclose(f);
		fprintf(stderr, "thpsim-soak: crashed in %s; its operations are in %s "
			"(thpsim-soak --shrink %s)\n", crash_tag, crash_path, crash_path);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void crash_note(const struct opts *o, const struct op_list *l, const char *tag)
{
	crash_ops = l;
	snprintf(crash_tag, sizeof(crash_tag), "crash %s", tag);
	snprintf(crash_path, sizeof(crash_path), "%s/crash-%s.ops", o->out ? o->out : ".", tag);
}

static void report(const struct opts *o, struct op_list *l, const struct diff_cfg *cfg,
		   still_fails_fn fails, void *arg, const char *why, const char *tag)
{
	char path[512], name[128], err[256];
	size_t before = l->n;
	FILE *f;

	fprintf(stderr, "DIVERGENCE %s: %s\n", tag, why);
	shrink_ops(l, fails, arg, 120.0);
	fprintf(stderr, "  shrunk from %zu to %zu operations\n", before, l->n);
	snprintf(path, sizeof(path), "%s/repro-%s.ops", o->out ? o->out : ".", tag);
	f = fopen(path, "w");
	if (f) {
		snprintf(err, sizeof(err), "%s: %s", tag, why);
		for (char *c = err; *c; c++)
			if (*c == '\n')
				*c = ' ';
		ops_write(f, l, err);
		fclose(f);
		fprintf(stderr, "  reproduction: %s (thpsim-soak --replay %s)\n", path, path);
	}
	snprintf(name, sizeof(name), "repro_%s", tag);
	for (char *c = name; *c; c++)
		if (*c == '-' || *c == '.')
			*c = '_';
	fprintf(stderr, "  as a unit test:\n");
	diff_print_test(stderr, l, cfg, name);
}

/* ---- the metamorphic check ---- */
static const char *const meta_base[][2] = {
	{ "transparent_hugepage/enabled", "never" },
	{ "transparent_hugepage/enabled", "madvise" },
	{ "transparent_hugepage/enabled", "always" },
	{ "transparent_hugepage/use_zero_page", "0" }, /* with always */
};
#define NR_META (4 + 3 * 3 * 2)

/* Configuration i of the matrix as knob operations in front of ops. */
static void meta_config(int i, const struct op_list *ops, struct op_list *out)
{
	struct op k = { .kind = OP_knob };
	int ki, vi;

	memset(out, 0, sizeof(*out));
	out->ram_mib = ops->ram_mib;
#define KNOB(n, v)                                                                         \
	do {                                                                               \
		if (!op_knob_find((n), (v), &ki, &vi)) {                                   \
			k.knob = (uint8_t)ki;                                              \
			k.value = (uint8_t)vi;                                             \
			op_list_push(out, &k);                                             \
		}                                                                          \
	} while (0)
	if (i < 3) {
		KNOB(meta_base[i][0], meta_base[i][1]);
	} else if (i == 3) {
		KNOB("transparent_hugepage/enabled", "always");
		KNOB(meta_base[3][0], meta_base[3][1]);
	} else {
		int j = i - 4;

		KNOB("transparent_hugepage/enabled", "always");
		KNOB("thpsim/huge_zero_page_lifetime",
		     op_knob_value_of("thpsim/huge_zero_page_lifetime", j % 3));
		KNOB("thpsim/huge_zero_wp", op_knob_value_of("thpsim/huge_zero_wp", (j / 3) % 3));
		KNOB("thpsim/thp_cow", op_knob_value_of("thpsim/thp_cow", j / 9));
	}
#undef KNOB
	for (size_t n = 0; n < ops->n; n++)
		op_list_push(out, &ops->op[n]);
}

static void meta_name(int i, char *buf, size_t len)
{
	if (i < 3)
		snprintf(buf, len, "enabled=%s", meta_base[i][1]);
	else if (i == 3)
		snprintf(buf, len, "enabled=always use_zero_page=0");
	else
		snprintf(buf, len, "enabled=always lifetime=%s huge_zero_wp=%s thp_cow=%s",
			 op_knob_value_of("thpsim/huge_zero_page_lifetime", (i - 4) % 3),
			 op_knob_value_of("thpsim/huge_zero_wp", ((i - 4) / 3) % 3),
			 op_knob_value_of("thpsim/thp_cow", (i - 4) / 9));
}

struct meta_arg {
	struct diff_cfg cfg;
	int a, b; /* the two configurations that disagree */
};

/* Run ops under configuration i: 1 and the transcript, 0 when inconclusive
 * (-ENOMEM), -1 on a divergence from the reference. */
static int meta_run(const struct op_list *ops, int i, const struct diff_cfg *cfg, uint64_t *tr,
		    struct diff *d)
{
	struct op_list l;
	int ret;

	meta_config(i, ops, &l);
	ret = diff_run(&l, cfg, d);
	op_list_free(&l);
	if (ret)
		return -1;
	*tr = d->transcript;
	return d->nenomem ? 0 : 1;
}

static bool meta_disagree(const struct op_list *l, void *arg)
{
	struct meta_arg *m = arg;
	struct diff d;
	uint64_t ta, tb;

	return meta_run(l, m->a, &m->cfg, &ta, &d) == 1 && meta_run(l, m->b, &m->cfg, &tb, &d) == 1 &&
	       ta != tb;
}

struct meta_stats {
	uint64_t runs, replays, ops, inconclusive;
};

static int metamorphic(const struct opts *o, uint64_t run, uint64_t seed, struct meta_stats *st,
		       uint64_t *divergences)
{
	struct gen g;
	struct op_list l = { 0 };
	struct diff d;
	struct diff_cfg cfg = run_cfg(o);
	uint64_t t0 = 0;
	char tag[64];

	/* generate against the first configuration, then replay the rest */
	gen_start(&g, seed, true, &l);
	l.ram_mib = 1024; /* room for every policy: no -ENOMEM */
	{
		size_t n = gen_length(&g);
		struct op_list head;

		meta_config(0, &l, &head);
		cfg.ram_mib = l.ram_mib;
		if (diff_open(&d, &cfg))
			return -1;
		for (size_t i = 0; i < head.n; i++)
			diff_step(&d, &head.op[i]);
		for (size_t i = 0; i < n && !d.failed; i++) {
			struct op op = gen_op(&g, &d);

			op_list_push(&l, &op);
			diff_step(&d, &op);
		}
		op_list_free(&head);
		st->ops += d.nops;
		if (diff_close(&d)) {
			struct diverges_arg a = { .cfg = run_cfg(o) };
			struct op_list full;

			(*divergences)++;
			meta_config(0, &l, &full);
			snprintf(tag, sizeof(tag), "%" PRIu64 "-run%" PRIu64, o->seed, run);
			report(o, &full, &a.cfg, diverges, &a, d.why, tag);
			op_list_free(&full);
			op_list_free(&l);
			return 0;
		}
		t0 = d.transcript;
		if (d.nenomem) {
			st->inconclusive++;
			op_list_free(&l);
			return 0;
		}
	}
	st->runs++;
	for (int i = 1; i < NR_META; i++) {
		uint64_t t;
		int r = meta_run(&l, i, &cfg, &t, &d);

		st->replays++;
		st->ops += d.nops;
		if (r < 0) {
			struct diverges_arg a = { .cfg = run_cfg(o) };
			struct op_list full;

			(*divergences)++;
			meta_config(i, &l, &full);
			snprintf(tag, sizeof(tag), "%" PRIu64 "-run%" PRIu64 "-meta%d", o->seed, run, i);
			report(o, &full, &a.cfg, diverges, &a, d.why, tag);
			op_list_free(&full);
			break;
		}
		if (r == 0) {
			st->inconclusive++;
			continue;
		}
		if (t != t0) {
			struct meta_arg m = { .cfg = run_cfg(o), .a = 0, .b = i };
			char na[96], nb[96], why[512];

			(*divergences)++;
			meta_name(0, na, sizeof(na));
			meta_name(i, nb, sizeof(nb));
			snprintf(why, sizeof(why), "metamorphic: the same operations answer differently "
				 "under \"%s\" and \"%s\"", na, nb);
			snprintf(tag, sizeof(tag), "%" PRIu64 "-run%" PRIu64 "-meta%d", o->seed, run, i);
			report(o, &l, &m.cfg, meta_disagree, &m, why, tag);
			fprintf(stderr, "  (replay it with the knobs of \"%s\" and of \"%s\")\n", na, nb);
			break;
		}
	}
	op_list_free(&l);
	return 0;
}

/* ---- the soak ---- */
struct soak_result {
	uint64_t total, divergences, runs, skipped, enomem;
	struct meta_stats ms;
};

static void soak_runs(const struct opts *o, uint64_t budget, struct soak_result *res);

static int soak(const struct opts *o)
{
	struct soak_result r = { 0 };
	double t0 = now();

	if (o->jobs > 1) {
		/* J processes, each its share of the operations and every J-th run;
		 * the runs, and so their seeds, are the same whatever J is */
		int fds[REF_MAX_PROCS * 8][2];
		pid_t pids[REF_MAX_PROCS * 8];

		for (int j = 0; j < o->jobs; j++) {
			if (pipe(fds[j]))
				return 2;
			fflush(NULL);
			pids[j] = fork();
			if (pids[j] == 0) {
				struct opts c = *o;
				struct soak_result cr = { 0 };

				c.job = j;
				soak_runs(&c, o->ops / (uint64_t)o->jobs + (j < (int)(o->ops % (uint64_t)o->jobs)),
					  &cr);
				if (write(fds[j][1], &cr, sizeof(cr)) != (ssize_t)sizeof(cr))
					_exit(2);
				_exit(0);
			}
			close(fds[j][1]);
		}
		for (int j = 0; j < o->jobs; j++) {
			struct soak_result cr;
			int status;

			if (read(fds[j][0], &cr, sizeof(cr)) != (ssize_t)sizeof(cr)) {
				fprintf(stderr, "thpsim-soak: job %d died (a crash: see its crash-*.ops)\n", j);
				cr = (struct soak_result){ .divergences = 1 };
			}
			waitpid(pids[j], &status, 0);
			r.total += cr.total;
			r.divergences += cr.divergences;
			r.runs += cr.runs;
			r.skipped += cr.skipped;
			r.enomem += cr.enomem;
			r.ms.runs += cr.ms.runs;
			r.ms.replays += cr.ms.replays;
			r.ms.ops += cr.ms.ops;
			r.ms.inconclusive += cr.ms.inconclusive;
		}
	} else {
		soak_runs(o, o->ops, &r);
	}
	if (!o->quiet) {
		printf("runs=%" PRIu64 " enomem=%" PRIu64 " skipped=%" PRIu64 " jobs=%d seconds=%.0f\n",
		       r.runs, r.enomem, r.skipped, o->jobs > 1 ? o->jobs : 1, now() - t0);
		printf("metamorphic: runs=%" PRIu64 " replays=%" PRIu64 " ops=%" PRIu64
		       " inconclusive=%" PRIu64 " configurations=%d\n",
		       r.ms.runs, r.ms.replays, r.ms.ops, r.ms.inconclusive, NR_META);
	}
	printf("ops=%" PRIu64 " divergences=%" PRIu64 " seed=%" PRIu64 "\n", r.total, r.divergences,
	       o->seed);
	return r.divergences ? 1 : 0;
}

static void soak_runs(const struct opts *o, uint64_t budget, struct soak_result *res)
{
	uint64_t total = 0, divergences = 0, runs = 0, skipped = 0, enomem = 0;
	struct meta_stats ms = { 0 };
	double t0 = now(), last = t0;
	int stride = o->jobs > 1 ? o->jobs : 1;

	for (uint64_t run = o->first_run + (uint64_t)o->job; total < budget; run += (uint64_t)stride) {
		uint64_t seed = rng_mix(o->seed, run);
		struct gen g;
		struct op_list l = { 0 };
		struct diff d;
		struct diff_cfg cfg = run_cfg(o);
		size_t n;

		if (o->runs && run >= o->first_run + o->runs)
			break;
		if (o->verbose)
			fprintf(stderr, "run %" PRIu64 "\n", run);
		/* chosen by the run's seed, not its index: with --jobs J the
		 * runs are dealt out by index, and every 64th index would land
		 * every metamorphic run (22 replays) on one job */
		if (o->meta_every && seed % (uint64_t)o->meta_every == (uint64_t)o->meta_every - 1) {
			metamorphic(o, run, seed, &ms, &divergences);
			continue;
		}
		runs++;
		gen_start(&g, seed, false, &l);
		{
			char tag[64];

			snprintf(tag, sizeof(tag), "%" PRIu64 "-run%" PRIu64, o->seed, run);
			crash_note(o, &l, tag);
		}
		cfg.ram_mib = l.ram_mib;
		if (diff_open(&d, &cfg)) {
			fprintf(stderr, "run %" PRIu64 ": %s\n", run, d.why);
			divergences++;
			break;
		}
		for (size_t i = 0; i < l.n; i++)
			diff_step(&d, &l.op[i]);
		n = gen_length(&g);
		for (size_t i = 0; i < n && total + d.nops < budget && !d.failed; i++) {
			struct op op = gen_op(&g, &d);

			op_list_push(&l, &op);
			diff_step(&d, &op);
		}
		total += d.nops;
		skipped += d.nskipped;
		enomem += d.nenomem;
		if (diff_close(&d)) {
			char tag[64];
			struct diverges_arg a = { .cfg = run_cfg(o) };

			divergences++;
			snprintf(tag, sizeof(tag), "%" PRIu64 "-run%" PRIu64, o->seed, run);
			if ((int)divergences <= o->max_repros)
				report(o, &l, &a.cfg, diverges, &a, d.why, tag);
			else
				fprintf(stderr, "DIVERGENCE %s: %s (not shrunk: --max-repros)\n", tag, d.why);
		}
		op_list_free(&l);
		if (o->progress && now() - last >= o->progress) {
			double t = now() - t0;

			last = now();
			char who[32] = "";

			if (stride > 1)
				snprintf(who, sizeof(who), " job %d", o->job);
			fprintf(stderr, "soak%s: %" PRIu64 " ops in %.0f s (%.0f/s), %" PRIu64 " runs, %" PRIu64
				" divergences\n", who, total, t, (double)total / t, runs, divergences);
		}
	}
	*res = (struct soak_result){ total, divergences, runs, skipped, enomem, ms };
}

/* ---- reproductions ---- */
static int replay(const struct opts *o, int argc, char **argv)
{
	int bad = 0, good = 0;

	for (int i = 0; i < argc; i++) {
		struct op_list l;
		struct diff d;
		struct diff_cfg cfg = run_cfg(o);
		char err[512];

		if (ops_load(argv[i], &l, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		if (diff_run(&l, &cfg, &d)) {
			printf("FAIL %s: operation %zu: %s\n", argv[i], d.failed_at + 1, d.why);
			bad++;
		} else {
			printf("ok   %s (%" PRIu64 " ops, %" PRIu64 " -ENOMEM)\n", argv[i], d.nops, d.nenomem);
			good++;
		}
		op_list_free(&l);
	}
	printf("%d passed, %d failed\n", good, bad);
	return bad ? 1 : 0;
}

/* Shrink a file that diverges (or crashes the model) and print the result. */
static int shrink_file(const struct opts *o, const char *path)
{
	struct op_list l;
	struct diverges_arg a = { .cfg = run_cfg(o) };
	struct diff d;
	char err[512], out[600];
	size_t before;
	FILE *f;

	if (ops_load(path, &l, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (!diverges(&l, &a)) {
		printf("%s: runs clean, nothing to shrink\n", path);
		op_list_free(&l);
		return 0;
	}
	before = l.n;
	shrink_ops(&l, diverges, &a, 600.0);
	snprintf(out, sizeof(out), "%s.min.ops", path);
	f = fopen(out, "w");
	if (f) {
		ops_write(f, &l, "shrunk");
		fclose(f);
	}
	fprintf(stderr, "%s: shrunk from %zu to %zu operations: %s\n", path, before, l.n, out);
	ops_write(stderr, &l, NULL);
	fflush(NULL);
	if (fork() == 0) { /* the reason, if it is not a crash */
		if (diff_run(&l, &a.cfg, &d))
			fprintf(stderr, "diverges at operation %zu: %s\n", d.failed_at + 1, d.why);
		_exit(0);
	}
	wait(NULL);
	op_list_free(&l);
	return 1;
}

static int print_test(const struct opts *o, const char *path, const char *name)
{
	struct op_list l;
	struct diff_cfg cfg = run_cfg(o);
	char err[512];

	if (ops_load(path, &l, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	diff_print_test(stdout, &l, &cfg, name ? name : "repro");
	op_list_free(&l);
	return 0;
}

/* ---- failure injection ---- */
struct inject_result {
	uint64_t runs, enomem_runs, fallback_runs;
};

/* One run with the nth allocation of cls failing (nth 0: count only). */
static int inject_run(const struct op_list *l, const struct opts *o, enum thps_alloc_class cls,
		      uint64_t nth, uint64_t *count, struct diff *d)
{
	struct diff_cfg cfg = run_cfg(o);

	cfg.ram_mib = l->ram_mib;
	cfg.inject_class = cls;
	cfg.inject_nth = nth;
	cfg.inject_count = true;
	cfg.inject_sticky = o->sticky;
	if (diff_open(d, &cfg)) {
		d->failed = true;
		return -1;
	}
	for (size_t i = 0; i < l->n && !d->failed; i++)
		diff_step(d, &l->op[i]);
	if (count)
		*count = thps_alloc_count(d->m, cls);
	return diff_close(d);
}

static int inject(const struct opts *o, int argc, char **argv)
{
	static const char *const cls_name[] = { "data-page", "page-table" };
	int bad = 0, good = 0;

	for (int i = 0; i < argc; i++) {
		struct op_list l;
		char err[512];

		if (ops_load(argv[i], &l, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
		for (int c = 0; c < 2; c++) {
			enum thps_alloc_class cls = (enum thps_alloc_class)c;
			struct inject_result r = { 0 };
			struct diff d;
			uint64_t n = 0;
			bool failed = false;

			if (inject_run(&l, o, cls, 0, &n, &d)) {
				printf("FAIL %s: without injection: %s\n", argv[i], d.why);
				bad++;
				continue;
			}
			for (uint64_t nth = 1; nth <= n; nth++) {
				uint64_t seen;

				if (inject_run(&l, o, cls, nth, &seen, &d)) {
					printf("FAIL %s: %s allocation %" PRIu64 " of %" PRIu64 "%s failing: "
					       "operation %zu: %s\n", argv[i], cls_name[c], nth, n,
					       o->sticky ? " and every later one" : "", d.failed_at + 1,
					       d.why);
					failed = true;
					break;
				}
				r.runs++;
				if (d.nenomem)
					r.enomem_runs++;
				else
					r.fallback_runs++;
			}
			if (failed) {
				bad++;
				continue;
			}
			good++;
			printf("ok   %s: %s allocations %" PRIu64 ", each failed%s in turn: %" PRIu64
			       " runs ended in -ENOMEM, %" PRIu64 " took a fallback and succeeded, "
			       "0 leaks\n",
			       argv[i], cls_name[c], n, o->sticky ? " (with every later one)" : "",
			       r.enomem_runs, r.fallback_runs);
			fflush(stdout);
		}
		op_list_free(&l);
	}
	printf("%d passed, %d failed\n", good, bad);
	return bad ? 1 : 0;
}

/* ---- threads ---- */
struct worker {
	pthread_t th;
	int id;
	const struct opts *o;
	thps_machine *m;
	struct diff d;
	uint64_t budget;
	struct op_list l;
	bool failed;
};

static pthread_rwlock_t world;      /* writers: the whole-state checker */
static uint64_t ops_done;           /* every worker's, for the checker's cadence */
static volatile int stop_shrinker;

static void *shrinker_thread(void *arg)
{
	thps_machine *m = arg;

	while (!__atomic_load_n(&stop_shrinker, __ATOMIC_RELAXED)) {
		pthread_rwlock_rdlock(&world);
		thps_drop_caches(m);
		pthread_rwlock_unlock(&world);
	}
	return NULL;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct gen g;

	gen_start(&g, rng_mix(w->o->seed, (uint64_t)w->id + 1000), true, &w->l);
	for (uint64_t i = 0; i < w->budget && !w->d.failed; i++) {
		struct op op;
		uint64_t n;

		pthread_rwlock_rdlock(&world);
		op = gen_op(&g, &w->d);
		op_list_push(&w->l, &op);
		diff_step(&w->d, &op);
		pthread_rwlock_unlock(&world);
		n = __atomic_add_fetch(&ops_done, 1, __ATOMIC_RELAXED);
		if (w->o->check_every && n % (uint64_t)(w->o->check_every * 64) == 0) {
			pthread_rwlock_wrlock(&world);
			if (thps_check(w->m) && !w->d.failed) {
				snprintf(w->d.why, sizeof(w->d.why), "state check: %s", thps_last_error(w->m));
				w->d.failed = true;
			}
			pthread_rwlock_unlock(&world);
		}
	}
	return NULL;
}

static int threads(const struct opts *o)
{
	int nt = o->threads, slots = REF_MAX_PROCS / nt, bad = 0;
	struct worker *w = calloc((size_t)nt, sizeof(*w));
	struct thps_config mc = { .ram_bytes = 256ULL << 20 };
	pthread_rwlockattr_t ra;
	pthread_t sh;
	thps_machine *m;
	uint64_t total = 0, enomem = 0;
	double t0 = now();

	if (!w || thps_machine_new(&mc, &m))
		return 2;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&world, &ra);
	thps_knob_set(m, "transparent_hugepage/enabled", "always");
	for (int i = 0; i < nt; i++) {
		struct diff_cfg cfg = { .isolation = true, .shared = m, .first_slot = i * slots,
					.nr_slots = slots };

		w[i].id = i;
		w[i].o = o;
		w[i].m = m;
		w[i].budget = o->ops / (uint64_t)nt;
		if (diff_open(&w[i].d, &cfg))
			return 2;
	}
	stop_shrinker = 0;
	pthread_create(&sh, NULL, shrinker_thread, m);
	for (int i = 0; i < nt; i++)
		pthread_create(&w[i].th, NULL, worker_thread, &w[i]);
	for (int i = 0; i < nt; i++)
		pthread_join(w[i].th, NULL);
	__atomic_store_n(&stop_shrinker, 1, __ATOMIC_RELAXED);
	pthread_join(sh, NULL);
	for (int i = 0; i < nt; i++) {
		total += w[i].d.nops;
		enomem += w[i].d.nenomem;
		if (diff_close(&w[i].d)) {
			fprintf(stderr, "DIVERGENCE thread %d (seed %" PRIu64 "), operation %" PRIu64 ": %s\n",
				i, o->seed, w[i].d.nops + 1, w[i].d.why);
			bad++;
		}
		op_list_free(&w[i].l);
	}
	thps_drop_caches(m);
	if (thps_check(m)) {
		fprintf(stderr, "state check at the end: %s\n", thps_last_error(m));
		bad++;
	} else {
		uint64_t mi[THPS_NR_MEMINFO_ITEMS];

		thps_meminfo(m, mi);
		if (mi[THPS_MEM_MemFree] != mi[THPS_MEM_MemTotal]) {
			fprintf(stderr, "leak: MemFree %" PRIu64 " kB of %" PRIu64 " kB\n",
				mi[THPS_MEM_MemFree], mi[THPS_MEM_MemTotal]);
			bad++;
		}
		thps_machine_free(m);
	}
	free(w);
	printf("threads=%d enomem=%" PRIu64 " seconds=%.1f\n", nt, enomem, now() - t0);
	printf("ops=%" PRIu64 " divergences=%d seed=%" PRIu64 "\n", total, bad, o->seed);
	return bad ? 1 : 0;
}

/* ---- a seed corpus for the fuzzer ---- */
static int make_corpus(const struct opts *o, const char *dir, uint64_t n)
{
	struct rng r = { o->seed };

	mkdir(dir, 0777);
	for (uint64_t i = 0; i < n; i++) {
		char path[512];
		size_t len = 1 + OP_RECORD * (size_t)(8 + rng_below(&r, 120));
		FILE *f;

		snprintf(path, sizeof(path), "%s/seed-%03" PRIu64, dir, i);
		f = fopen(path, "wb");
		if (!f) {
			perror(path);
			return 2;
		}
		for (size_t b = 0; b < len; b++)
			fputc((int)(rng_next(&r) & 0xff), f);
		fclose(f);
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: thpsim-soak [--ops N] [--seed S] [--check-every K] [--layout-every K]\n"
		"                   [--metamorphic-every M] [--max-repros R] [--out DIR]\n"
		"                   [--progress SECONDS] [--quiet] [--first-run R] [--runs N] [-v]\n"
		"                   [--jobs J]\n"
		"       thpsim-soak --replay FILE.ops...\n"
		"       thpsim-soak --print-test FILE.ops [NAME]\n"
		"       thpsim-soak --shrink FILE.ops\n"
		"       thpsim-soak --inject [--sticky] FILE.ops...\n"
		"       thpsim-soak --threads T [--ops N] [--seed S]\n"
		"       thpsim-soak --make-corpus DIR N [--seed S]\n");
}

static int num(const char *opt, const char *s, uint64_t *out)
{
	char *end;

	if (!s || !*s || *s == '-') {
		fprintf(stderr, "thpsim-soak: %s needs a number\n", opt);
		return -1;
	}
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "thpsim-soak: %s: '%s' is not a number\n", opt, s);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .ops = 100000, .seed = 1, .check_every = 1, .layout_every = 16,
			  .meta_every = 64, .max_repros = 3 };
	enum { SOAK, REPLAY, PRINT, INJECT, THREADS, CORPUS, SHRINK } mode = SOAK;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;

#define NUMARG(field)                                                                      \
	do {                                                                               \
		if (num(a, i + 1 < argc ? argv[++i] : NULL, &v))                           \
			return 2;                                                          \
		field = v;                                                                 \
	} while (0)
		if (!strcmp(a, "--ops"))
			NUMARG(o.ops);
		else if (!strcmp(a, "--seed"))
			NUMARG(o.seed);
		else if (!strcmp(a, "--check-every"))
			NUMARG(o.check_every);
		else if (!strcmp(a, "--layout-every"))
			NUMARG(o.layout_every);
		else if (!strcmp(a, "--metamorphic-every"))
			NUMARG(o.meta_every);
		else if (!strcmp(a, "--max-repros"))
			NUMARG(o.max_repros);
		else if (!strcmp(a, "--jobs")) {
			NUMARG(o.jobs);
			if (o.jobs < 1 || o.jobs > 64) {
				fprintf(stderr, "thpsim-soak: --jobs takes 1 to 64\n");
				return 2;
			}
		} else if (!strcmp(a, "--first-run"))
			NUMARG(o.first_run);
		else if (!strcmp(a, "--runs"))
			NUMARG(o.runs);
		else if (!strcmp(a, "-v"))
			o.verbose = true;
		else if (!strcmp(a, "--progress"))
			NUMARG(o.progress);
		else if (!strcmp(a, "--threads")) {
			NUMARG(o.threads);
			mode = THREADS;
			if (o.threads < 1 || o.threads > REF_MAX_PROCS) {
				fprintf(stderr, "thpsim-soak: --threads takes 1 to %d\n", REF_MAX_PROCS);
				return 2;
			}
		} else if (!strcmp(a, "--out") && i + 1 < argc)
			o.out = argv[++i];
		else if (!strcmp(a, "--quiet"))
			o.quiet = true;
		else if (!strcmp(a, "--sticky"))
			o.sticky = true;
		else if (!strcmp(a, "--replay"))
			mode = REPLAY;
		else if (!strcmp(a, "--print-test"))
			mode = PRINT;
		else if (!strcmp(a, "--shrink"))
			mode = SHRINK;
		else if (!strcmp(a, "--inject"))
			mode = INJECT;
		else if (!strcmp(a, "--make-corpus"))
			mode = CORPUS;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage();
			return 0;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "thpsim-soak: unknown option '%s'\n", a);
			usage();
			return 2;
		} else
			break;
#undef NUMARG
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGABRT, on_crash);
	signal(SIGSEGV, on_crash);
	switch (mode) {
	case SHRINK:
		if (i >= argc) {
			usage();
			return 2;
		}
		return shrink_file(&o, argv[i]);
	case REPLAY:
	case INJECT:
		if (i >= argc) {
			usage();
			return 2;
		}
		return mode == REPLAY ? replay(&o, argc - i, argv + i) : inject(&o, argc - i, argv + i);
	case PRINT:
		if (i >= argc) {
			usage();
			return 2;
		}
		return print_test(&o, argv[i], i + 1 < argc ? argv[i + 1] : NULL);
	case CORPUS: {
		uint64_t n;

		if (i + 1 >= argc || num("--make-corpus", argv[i + 1], &n))
			return 2;
		return make_corpus(&o, argv[i], n);
	}
	case THREADS:
		return threads(&o);
	default:
		if (i < argc) {
			fprintf(stderr, "thpsim-soak: unexpected argument '%s'\n", argv[i]);
			return 2;
		}
		return soak(&o);
	}
}
