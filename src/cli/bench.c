/*
 * bench.c - "thpsim bench": how fast the model takes faults.
 *
 * Rates are measured in one run on this machine; they are printed, never
 * asserted (the machines are shared and noisy).
 *  - read_4k: read one byte every 4 KiB of a region THP may not use: every
 *    access is a fault that maps the 4 KiB zero page.
 *  - read_hzp: the same on a MADV_HUGEPAGE region: one fault per 2 MiB maps
 *    the huge zero page (rate in faults per second).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_record.h"
#include "cli.h"
#include "util/json.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Faults per second of read-faulting "bytes" of a fresh region, repeated
 * until at least min_s seconds have passed. */
static double fault_rate(int hugepage, uint64_t bytes, double min_s)
{
	uint64_t faults = 0;
	double t0 = now_s(), t = t0;
	thps_machine *m;

	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 4ULL << 30 }, &m))
		return 0;
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
		t = now_s();
	} while (t - t0 < min_s);
	thps_machine_free(m);
	return (double)faults / (t - t0);
}

int cmd_bench(int argc, char **argv)
{
	int json = 0;
	double r4k, rhzp;
	struct bench_record br;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &json))
				return 2;
		} else {
			return cli_usage("bench: unknown argument '%s'", argv[i]);
		}
	}
	r4k = fault_rate(0, 64ULL << 20, 1.0);
	rhzp = fault_rate(1, 1ULL << 30, 1.0);
	bench_record_collect(&br);
	if (json) {
		struct json j;

		json_init(&j, stdout, 1);
		json_begin_object(&j, NULL);
		json_begin_object(&j, "fault_rate");
		json_double(&j, "read_4k_per_s", r4k);
		json_double(&j, "read_hzp_per_s", rhzp);
		json_end_object(&j);
		bench_record_print(&br, &j);
		json_end_object(&j);
		json_finish(&j);
	} else {
		printf("model fault rates (one run on this machine):\n");
		printf("  4 KiB read faults (zero page)       %12.0f /s\n", r4k);
		printf("  huge zero page read faults (2 MiB)  %12.0f /s\n", rhzp);
		bench_record_print(&br, NULL);
	}
	return 0;
}
