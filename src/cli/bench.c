/*
 * bench.c - "thpsim bench": how fast the model takes faults, what the huge
 * zero page's reference count costs parallel faulters, and what the model
 * costs in host memory.
 *
 * Rates are measured in one run on this machine; they are printed, never
 * asserted (the machines are shared and noisy).
 *  - read_4k: read one byte every 4 KiB of a region THP may not use: every
 *    access is a fault that maps the 4 KiB zero page.  The same loop run on
 *    the host's own kernel (bench_host.c) is the anchor: ratio_vs_native is
 *    the model's rate over the kernel's.
 *  - read_hzp: the same on a MADV_HUGEPAGE region: one fault per 2 MiB maps
 *    the huge zero page (rate in faults per second); also run natively, for
 *    hzp_ratio_vs_native.
 *  - refcount: huge zero page faults from 1..N threads of independent
 *    processes under each lifetime of the huge zero page
 *    (bench_refcount.c), each lifetime's rate over the persistent one's.
 *  - memory: a 64 GiB simulated machine with 1 GiB written; the host memory
 *    this process then holds, and the metadata bytes per simulated frame.
 *
 * Each refcount figure is the median of --repeat runs, taken in turns
 * (every lifetime and thread count once, then again) so that a slow moment
 * of the host does not fall on one lifetime only.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util/kprofile.h"
#include "bench_record.h"
#include "cli.h"
#include "util/json.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

#define MAX_THREADS 256
#define MAX_REPEAT 15

struct bench_opts {
	int json;
	int max_threads;     /* refcount table: 1 .. max_threads */
	int repeat;          /* runs per refcount figure (median) */
	double seconds;      /* length of each run */
	int procs;           /* live processes per thread */
	uint64_t region;     /* bytes each process read-faults */
	uint64_t step;       /* ... one byte every step bytes */
	uint64_t mem_ram;    /* memory figure: simulated RAM ... */
	uint64_t mem_touch;  /* ... and bytes written */
};

struct fault_rates {
	double read_4k, read_hzp, native_4k, native_minflt, native_hzp, native_hzp_minflt;
	/* this kernel maps the zero page on read faults; where it does not
	 * (thpsim kernel-profile), its reads allocate, and the model's rows
	 * take the same path so that like is compared with like */
	int zero_page;
};

struct memory_figures {
	size_t bytes_per_frame;
	uint64_t sim_ram, touched, host_rss_before, host_rss;
};

struct refcount_table {
	int nthreads;
	/* the kernel's huge zero page faults per second from 1..nthreads
	 * processes at once */
	double native[MAX_THREADS];
	/* faults per second [lifetime][threads - 1], median of the repeats,
	 * and the CPU share the threads got in that run */
	double rate[BENCH_NR_LIFETIMES][MAX_THREADS];
	double cpu_share[BENCH_NR_LIFETIMES][MAX_THREADS];
};

/* Below this CPU share the host was running something else as well. */
#define BUSY_SHARE 0.9

/* Faults per second of read-faulting "bytes" of a fresh region, repeated
 * until at least min_s seconds have passed. */
static double fault_rate(int hugepage, uint64_t bytes, double min_s, int zero_page)
{
	uint64_t faults = 0;
	double t0 = bench_now(), t = t0;
	thps_machine *m;

	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 4ULL << 30 }, &m))
		return 0;
	thps_knob_set(m, "thpsim/zero_page", zero_page ? "1" : "0");
	do {
		thps_proc *p;
		uint64_t a, v0[THPS_NR_VM_ITEMS], v1[THPS_NR_VM_ITEMS];
		struct thps_touch tt = { .len = bytes,
					 .step = hugepage ? THPS_HPAGE_PMD_SIZE : THPS_PAGE_SIZE,
					 .op = THPS_TOUCH_READ };

		if (thps_proc_new(m, &p))
			break;
		thps_mmap(p, 0, bytes, THPS_PROT_READ | THPS_PROT_WRITE,
			  THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &a);
		if (hugepage)
			thps_madvise(p, a, bytes, THPS_MADV_HUGEPAGE);
		tt.addr = a;
		thps_vmstat(m, v0);
		thps_touch(p, &tt);
		thps_vmstat(m, v1);
		faults += v1[THPS_VM_pgfault] - v0[THPS_VM_pgfault];
		thps_exit(p);
		t = bench_now();
	} while (t - t0 < min_s);
	thps_machine_free(m);
	return (double)faults / (t - t0);
}

/* A big simulated machine with a little of it written: what does the host
 * hold?  One process writes one byte every 4 KiB of mem_touch bytes. */
static int measure_memory(const struct bench_opts *o, struct memory_figures *f)
{
	uint64_t fig[THPS_NR_PROC_ITEMS];
	struct thps_touch t = { .len = o->mem_touch, .step = THPS_PAGE_SIZE,
				.op = THPS_TOUCH_WRITE, .value = 1 };
	thps_machine *m;
	thps_proc *p;
	int err;

	memset(f, 0, sizeof(*f));
	f->bytes_per_frame = thps_frame_metadata_bytes();
	f->sim_ram = o->mem_ram;
	f->host_rss_before = bench_host_rss();
	if ((err = thps_machine_new(&(struct thps_config){ .ram_bytes = o->mem_ram }, &m)))
		return msg_error(err, "bench: cannot create a %llu GiB machine",
				 (unsigned long long)(o->mem_ram / GIB));
	if ((err = thps_proc_new(m, &p)) ||
	    (err = thps_mmap(p, 0, o->mem_touch, THPS_PROT_READ | THPS_PROT_WRITE,
			     THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &t.addr)) ||
	    (err = thps_touch(p, &t)) || (err = thps_proc_figures(p, fig))) {
		msg_error(err, "bench: memory: %s", thps_last_error(m));
		thps_machine_free(m);
		return err;
	}
	f->touched = fig[THPS_PROC_Rss] << 10;
	f->host_rss = bench_host_rss();
	thps_machine_free(m);
	return 0;
}

struct sample {
	double rate, cpu_share;
};

static int cmp_sample(const void *a, const void *b)
{
	double x = ((const struct sample *)a)->rate, y = ((const struct sample *)b)->rate;

	return (x > y) - (x < y);
}

static int run_refcount(const struct bench_opts *o, struct refcount_table *tab)
{
	static struct sample runs[BENCH_NR_LIFETIMES][MAX_THREADS][MAX_REPEAT];

	tab->nthreads = o->max_threads;
	for (int r = 0; r < o->repeat; r++)
		for (int t = 1; t <= o->max_threads; t++)
			for (int l = 0; l < BENCH_NR_LIFETIMES; l++) {
				struct refcount_params prm = { .threads = t, .procs = o->procs,
							       .region = o->region, .step = o->step,
							       .seconds = o->seconds };
				struct refcount_result res;
				int err = bench_refcount_run(bench_lifetimes[l], &prm, &res);

				if (err)
					return err;
				runs[l][t - 1][r] = (struct sample){ res.faults_per_s, res.cpu_share };
			}
	for (int t = 1; t <= o->max_threads; t++)
		tab->native[t - 1] = bench_native_parallel_hzp(t, o->seconds);
	for (int l = 0; l < BENCH_NR_LIFETIMES; l++)
		for (int t = 0; t < o->max_threads; t++) {
			qsort(runs[l][t], (size_t)o->repeat, sizeof(runs[l][t][0]), cmp_sample);
			tab->rate[l][t] = runs[l][t][o->repeat / 2].rate;
			tab->cpu_share[l][t] = runs[l][t][o->repeat / 2].cpu_share;
		}
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : NAN;
}

static void print_json(const struct bench_opts *o, const struct fault_rates *fr,
		       const struct refcount_table *tab, const struct memory_figures *mem,
		       const struct bench_record *br)
{
	const int persistent = BENCH_NR_LIFETIMES - 1;
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j, NULL);
	json_begin_object(&j, "fault_rate");
	json_double(&j, "read_4k_per_s", fr->read_4k);
	json_double(&j, "read_hzp_per_s", fr->read_hzp);
	json_int(&j, "kernel_zero_page", fr->zero_page);
	json_double(&j, "native_read_4k_per_s", fr->native_4k);
	json_double(&j, "native_minor_faults_per_read", fr->native_minflt);
	json_double(&j, "ratio_vs_native", ratio(fr->read_4k, fr->native_4k));
	json_double(&j, "native_read_hzp_per_s", fr->native_hzp);
	json_double(&j, "native_minor_faults_per_hzp_read", fr->native_hzp_minflt);
	json_double(&j, "hzp_ratio_vs_native", ratio(fr->read_hzp, fr->native_hzp));
	json_end_object(&j);
	json_begin_array(&j, "refcount");
	for (int t = 1; t <= tab->nthreads; t++)
		for (int l = 0; l < BENCH_NR_LIFETIMES; l++) {
			json_begin_object(&j, NULL);
			json_string(&j, "lifecycle", bench_lifetimes[l]);
			json_int(&j, "threads", t);
			json_int(&j, "processes", (int64_t)t * o->procs);
			json_double(&j, "faults_per_s", tab->rate[l][t - 1]);
			json_double(&j, "ratio_vs_persistent",
				    ratio(tab->rate[l][t - 1], tab->rate[persistent][t - 1]));
			json_double(&j, "scaling_vs_1_thread",
				    ratio(tab->rate[l][t - 1], tab->rate[l][0]));
			json_double(&j, "cpu_share", tab->cpu_share[l][t - 1]);
			json_end_object(&j);
		}
	json_end_array(&j);
	json_begin_array(&j, "native_hzp_parallel");
	for (int t = 1; t <= tab->nthreads; t++) {
		json_begin_object(&j, NULL);
		json_int(&j, "processes", t);
		json_double(&j, "faults_per_s", tab->native[t - 1]);
		json_double(&j, "scaling_vs_1_process", ratio(tab->native[t - 1], tab->native[0]));
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_object(&j, "refcount_setup");
	json_int(&j, "processes_per_thread", o->procs);
	json_uint(&j, "region_mib", o->region / MIB);
	json_uint(&j, "step_kib", o->step >> 10);
	json_double(&j, "seconds_per_run", o->seconds);
	json_int(&j, "runs_per_figure", o->repeat);
	json_int(&j, "host_cpus", bench_nr_cpus());
	json_end_object(&j);
	json_begin_object(&j, "memory");
	json_uint(&j, "bytes_per_frame", mem->bytes_per_frame);
	json_double(&j, "sim_ram_gib", (double)mem->sim_ram / GIB);
	json_double(&j, "touched_gib", (double)mem->touched / GIB);
	json_double(&j, "host_rss_gib", (double)mem->host_rss / GIB);
	json_double(&j, "host_rss_before_gib", (double)mem->host_rss_before / GIB);
	json_end_object(&j);
	bench_record_print(br, &j);
	json_end_object(&j);
	json_finish(&j);
}

static void print_text(const struct bench_opts *o, const struct fault_rates *fr,
		       const struct refcount_table *tab, const struct memory_figures *mem,
		       const struct bench_record *br)
{
	const int persistent = BENCH_NR_LIFETIMES - 1;
	int busy = 0;

	printf("model fault rates (one run on this machine):\n");
	if (!fr->zero_page)
		printf("  (this kernel maps no zero page: its read faults allocate a page or a THP,\n"
		       "   and the model's rows below take that path too, thpsim/zero_page=0)\n");
	printf("  4 KiB read faults (%s)       %12.0f /s\n",
	       fr->zero_page ? "zero page" : "allocating", fr->read_4k);
	printf("  %s  %12.0f /s\n",
	       fr->zero_page ? "huge zero page read faults (2 MiB)" : "THP read faults, allocating   ",
	       fr->read_hzp);
	printf("  this kernel, 4 KiB read faults      %12.0f /s  (%.2f minor faults per read)\n",
	       fr->native_4k, fr->native_minflt);
	printf("  model / kernel                      %12.1f x\n",
	       ratio(fr->read_4k, fr->native_4k));
	printf("  this kernel, %s  %12.0f /s  (%.2f minor faults per read)\n",
	       fr->zero_page ? "huge zero page faults" : "THP read faults      ", fr->native_hzp,
	       fr->native_hzp_minflt);
	printf("  model / kernel                      %12.1f x\n\n",
	       ratio(fr->read_hzp, fr->native_hzp));

	printf("huge zero page read faults per second, %d live processes per thread, %llu MiB\n"
	       "each, read every %llu %s (median of %d runs of %.2f s; ratio to persistent):\n",
	       o->procs, (unsigned long long)(o->region / MIB),
	       (unsigned long long)(o->step >= MIB ? o->step / MIB : o->step >> 10),
	       o->step >= MIB ? "MiB" : "KiB", o->repeat, o->seconds);
	printf("  threads");
	for (int l = 0; l < BENCH_NR_LIFETIMES; l++)
		printf("  %21s", bench_lifetimes[l]);
	printf("\n");
	for (int t = 1; t <= tab->nthreads; t++) {
		printf("  %7d", t);
		for (int l = 0; l < BENCH_NR_LIFETIMES; l++) {
			busy |= tab->cpu_share[l][t - 1] < BUSY_SHARE;
			printf("  %12.0f%c (%5.3f)", tab->rate[l][t - 1],
			       tab->cpu_share[l][t - 1] < BUSY_SHARE ? '*' : ' ',
			       ratio(tab->rate[l][t - 1], tab->rate[persistent][t - 1]));
		}
		printf("\n");
	}
	if (tab->nthreads > 1) {
		printf("  scaling 1 -> %d threads:", tab->nthreads);
		for (int l = 0; l < BENCH_NR_LIFETIMES; l++)
			printf("  %s %.2fx", bench_lifetimes[l],
			       ratio(tab->rate[l][tab->nthreads - 1], tab->rate[l][0]));
		printf("  (%d host CPUs)\n", bench_nr_cpus());
	}
	printf("  this kernel (its own lifetime), 1 process reading every 2 MiB per thread%s:\n  ",
	       fr->zero_page ? "" : " (no zero page here: THP allocations, not comparable with "
				    "the rows above)");
	for (int t = 1; t <= tab->nthreads; t++)
		printf(" %d: %.0f/s (%.2fx)", t, tab->native[t - 1],
		       ratio(tab->native[t - 1], tab->native[0]));
	printf("\n");
	if (busy)
		printf("  * the threads got less than %.0f%% of a CPU each: the host was busy\n",
		       BUSY_SHARE * 100);

	printf("\nmemory: %llu GiB simulated, %.2f GiB written: host RSS %.3f GiB "
	       "(%.3f GiB before); %zu bytes of metadata per 4 KiB frame\n",
	       (unsigned long long)(mem->sim_ram / GIB), (double)mem->touched / GIB,
	       (double)mem->host_rss / GIB, (double)mem->host_rss_before / GIB,
	       mem->bytes_per_frame);
	printf("\n");
	bench_record_print(br, NULL);
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
	uint64_t v;

	if (cli_parse_u64(s, &v) || v < (uint64_t)lo || v > (uint64_t)hi)
		return cli_usage("bench: %s takes a whole number from %d to %d, not '%s'", opt, lo,
				 hi, s);
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct bench_opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int err = 0;

		if (strcmp(a, "--format") && strcmp(a, "--threads") && strcmp(a, "--seconds") &&
		    strcmp(a, "--repeat") && strcmp(a, "--procs") && strcmp(a, "--size") &&
		    strcmp(a, "--step"))
			return cli_bad_option("bench", a, "usage: thpsim bench [--threads N] "
					      "[--seconds S] [--repeat R] [--procs P] [--size SIZE] "
					      "[--step SIZE] [--format text|json]");
		if (!v)
			return cli_usage("bench: %s needs a value", a);
		i++;
		if (!strcmp(a, "--format")) {
			err = cli_parse_format(v, &o->json);
		} else if (!strcmp(a, "--threads")) {
			err = parse_int(a, v, 1, MAX_THREADS, &o->max_threads);
		} else if (!strcmp(a, "--repeat")) {
			err = parse_int(a, v, 1, MAX_REPEAT, &o->repeat);
		} else if (!strcmp(a, "--procs")) {
			err = parse_int(a, v, 1, 1024, &o->procs);
		} else if (!strcmp(a, "--seconds")) {
			char *end;

			errno = 0;
			o->seconds = strtod(v, &end);
			if (errno || end == v || *end || !(o->seconds >= 0.01 && o->seconds <= 60))
				err = cli_usage("bench: --seconds takes 0.01 to 60, not '%s'", v);
		} else if (!strcmp(a, "--step")) {
			if (cli_parse_size(v, &o->step) || o->step < THPS_PAGE_SIZE ||
			    o->step > THPS_HPAGE_PMD_SIZE || (o->step & (o->step - 1)))
				err = cli_usage("bench: --step takes a power of two from 4K to 2M, "
						"not '%s'", v);
		} else if (cli_parse_size(v, &o->region) || !o->region ||
			   o->region % THPS_HPAGE_PMD_SIZE || o->region > 64 * GIB) {
			err = cli_usage("bench: --size takes a multiple of 2M up to 64G, not '%s'", v);
		}
		if (err)
			return err;
	}
	{
		struct refcount_params prm = { .threads = o->max_threads, .procs = o->procs,
					       .region = o->region };

		if (bench_refcount_ram(&prm) > BENCH_MAX_RAM)
			return cli_usage("bench: %d threads of %d processes mapping %llu MiB each "
					 "need more than the %llu GiB a simulated machine can have",
					 o->max_threads, o->procs,
					 (unsigned long long)(o->region / MIB),
					 (unsigned long long)(BENCH_MAX_RAM / GIB));
	}
	return 0;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_opts o = { .max_threads = bench_nr_cpus(), .repeat = 5, .seconds = 0.3,
				.procs = 4, .region = 256 * MIB, .step = THPS_HPAGE_PMD_SIZE, .mem_ram = 64 * GIB,
				.mem_touch = 1 * GIB };
	static struct refcount_table tab;
	struct memory_figures mem;
	struct fault_rates fr;
	struct bench_record br;
	int err;

	if (o.max_threads > MAX_THREADS)
		o.max_threads = MAX_THREADS;
	if ((err = parse_args(argc, argv, &o)))
		return err;
	/* memory first, before the other runs leave anything in the heap */
	if (measure_memory(&o, &mem))
		return 1;
	fr.zero_page = strcmp(kprofile_get(kprofile_host(), "thpsim/zero_page"), "0") != 0;
	fr.read_4k = fault_rate(0, 64 * MIB, 1.0, fr.zero_page);
	fr.read_hzp = fault_rate(1, 1 * GIB, 1.0, fr.zero_page);
	fr.native_4k = bench_native_read(64 * MIB, 0, 1.0, &fr.native_minflt);
	fr.native_hzp = bench_native_read(1 * GIB, 1, 0.5, &fr.native_hzp_minflt);
	if (!fr.read_4k || !fr.read_hzp)
		return msg_error(0, "bench: the model's fault-rate runs failed"), 1;
	if (!fr.native_4k)
		msg_error(errno, "bench: warning: the native read-fault loop failed");
	if (run_refcount(&o, &tab))
		return 1;
	bench_record_collect(&br);
	if (o.json)
		print_json(&o, &fr, &tab, &mem, &br);
	else
		print_text(&o, &fr, &tab, &mem, &br);
	return 0;
}
