/*
 * demo.c - "thpsim demo": the cover letter's program in the model.
 *
 * Kirill Shutemov's program (../shared/seeds/001): posix_memalign 200 MiB at
 * 2 MiB, read one byte every 4 KiB; the demo then writes one byte every
 * 2 MiB.  It runs three times on a fresh simulated machine each: THP never,
 * THP always with the huge zero page, and THP always without it (the kernel
 * before the series), and shows what /proc would show after each pass.
 *
 * posix_memalign is modelled as glibc does it for a request this large: one
 * mmap of size + alignment + a page, a chunk header written at its start,
 * and another just below the aligned pointer.  Those two writes are the
 * 8 kB of Rss every run starts with.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "scenario/report.h"

struct demo_run {
	const char *name;
	const char *enabled, *use_zero_page;
};

static const struct demo_run demo_runs[] = {
	{ "THP never", "never", "1" },
	{ "THP always + huge zero page", "always", "1" },
	{ "THP always, no huge zero page", "always", "0" },
};
#define NR_RUNS ((int)(sizeof(demo_runs) / sizeof(demo_runs[0])))

struct demo_result {
	struct report after_alloc, after_read, after_write;
	uint64_t read_mismatches;
};

#define MIB (1ULL << 20)

static int run_one(const struct demo_run *run, uint64_t size, const struct knob_sets *sets,
		   struct demo_result *res)
{
	struct thps_config cfg = { .ram_bytes = (size * 2 + 512 * MIB) > (4096 * MIB)
							? size * 2 + 512 * MIB
							: 4096 * MIB };
	uint64_t base[THPS_NR_VM_ITEMS], map, p, hdr = 0x1000 | 2;
	thps_machine *m;
	thps_proc *proc;
	struct thps_touch t;
	const char *name = "demo";
	int err;

	err = thps_machine_new(&cfg, &m);
	if (err)
		return msg_error(err, "cannot create a machine of %llu MiB",
				 (unsigned long long)(cfg.ram_bytes >> 20));
	if ((err = cli_apply_sets(m, sets))) {
		thps_machine_free(m);
		return err;
	}
	if ((err = thps_knob_set(m, "transparent_hugepage/enabled", run->enabled)) ||
	    (err = thps_knob_set(m, "transparent_hugepage/use_zero_page", run->use_zero_page)))
		goto out;
	err = thps_proc_new(m, &proc);
	if (err)
		goto out;
	report_base(m, base);

	/* posix_memalign(&p, 2 MiB, size), as glibc serves it with mmap */
	err = thps_mmap(proc, 0, size + THPS_HPAGE_PMD_SIZE + THPS_PAGE_SIZE,
			THPS_PROT_READ | THPS_PROT_WRITE, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &map);
	if (err)
		goto out_proc;
	p = (map + 16 + THPS_HPAGE_PMD_SIZE - 1) & ~(THPS_HPAGE_PMD_SIZE - 1);
	if ((err = thps_write(proc, map + 8, &hdr, sizeof(hdr))) ||
	    (err = thps_write(proc, p - 8, &hdr, sizeof(hdr))))
		goto out_proc;
	report_take(&res->after_alloc, m, base, &proc, &name, 1);

	/* for (i = 0; i < size; i += 4096) assert(p[i] == 0); */
	t = (struct thps_touch){ .addr = p, .len = size, .step = THPS_PAGE_SIZE,
				 .op = THPS_TOUCH_READ, .value = 0, .check = 1 };
	err = thps_touch(proc, &t);
	if (err)
		goto out_proc;
	res->read_mismatches = t.mismatches;
	report_take(&res->after_read, m, base, &proc, &name, 1);

	/* then one byte every 2 MiB */
	t = (struct thps_touch){ .addr = p, .len = size, .step = THPS_HPAGE_PMD_SIZE,
				 .op = THPS_TOUCH_WRITE, .value = 1 };
	err = thps_touch(proc, &t);
	if (err)
		goto out_proc;
	report_take(&res->after_write, m, base, &proc, &name, 1);
out_proc:
	thps_exit(proc);
out:
	if (err)
		msg_error(err, "%s: %s", run->name, thps_last_error(m));
	thps_machine_free(m);
	return err;
}

static void print_json(uint64_t size, const struct demo_result *res, const struct knob_sets *sets)
{
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "program", "posix_memalign(&p, 2 MiB, size); read p[i] every 4 KiB; "
				   "write p[i] every 2 MiB");
	json_uint(&j, "size_kB", size >> 10);
	json_begin_array(&j, "runs");
	for (int r = 0; r < NR_RUNS; r++) {
		json_begin_object(&j, NULL);
		json_string(&j, "name", demo_runs[r].name);
		json_begin_object(&j, "knobs");
		json_string(&j, "transparent_hugepage/enabled", demo_runs[r].enabled);
		json_string(&j, "transparent_hugepage/use_zero_page", demo_runs[r].use_zero_page);
		for (int s = 0; s < sets->n; s++)
			json_string(&j, sets->name[s], sets->value[s]);
		json_end_object(&j);
		json_uint(&j, "read_mismatches", res[r].read_mismatches);
		report_json(&j, "after_alloc", &res[r].after_alloc);
		report_json(&j, "after_read", &res[r].after_read);
		report_json(&j, "after_write", &res[r].after_write);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

static void print_text(uint64_t size, const struct demo_result *res, const struct knob_sets *sets)
{
	const struct report *never = &res[0].after_read, *hzp = &res[1].after_read,
			    *nohzp = &res[2].after_read;

	printf("thpsim demo: the cover letter's program in the model of Linux 6.18\n");
	printf("  posix_memalign(&p, 2 MiB, %llu MiB); read p[i] every 4 KiB; then write p[i] = 1 "
	       "every 2 MiB\n", (unsigned long long)(size >> 20));
	for (int s = 0; s < sets->n; s++)
		printf("  with %s=%s\n", sets->name[s], sets->value[s]);
	printf("\n%-31s %-46s %s\n", "", "--------- after the read pass ---------",
	       "---------- after the write pass ----------");
	printf("%-31s %7s %10s %12s %8s   %7s %10s %12s %6s %6s\n", "run", "faults", "Rss kB",
	       "AnonHuge kB", "HZP", "faults", "Rss kB", "AnonHuge kB", "THPs", "splits");
	for (int r = 0; r < NR_RUNS; r++) {
		const struct report *a = &res[r].after_alloc, *rd = &res[r].after_read,
				    *wr = &res[r].after_write;

		printf("%-31s %7lld %10llu %12llu %8lld   %7lld %10llu %12llu %6lld %6lld\n",
		       demo_runs[r].name,
		       (long long)(rd->vm[THPS_VM_pgfault] - a->vm[THPS_VM_pgfault]),
		       (unsigned long long)rd->procs[0].fig[THPS_PROC_Rss],
		       (unsigned long long)rd->procs[0].fig[THPS_PROC_AnonHugePages],
		       (long long)rd->vm[THPS_VM_thp_zero_page_alloc],
		       (long long)(wr->vm[THPS_VM_pgfault] - rd->vm[THPS_VM_pgfault]),
		       (unsigned long long)wr->procs[0].fig[THPS_PROC_Rss],
		       (unsigned long long)wr->procs[0].fig[THPS_PROC_AnonHugePages],
		       (long long)wr->vm[THPS_VM_thp_fault_alloc],
		       (long long)wr->vm[THPS_VM_thp_split_pmd]);
	}
	printf("\nfaults: page faults taken by the pass (pgfault); Rss, AnonHuge: the process's "
	       "smaps_rollup;\nHZP: huge zero pages allocated (thp_zero_page_alloc); THPs: "
	       "thp_fault_alloc; splits: thp_split_pmd.\n");
	printf("Before the pass every run has %llu kB of Rss: the page(s) of glibc's chunk headers.\n\n",
	       (unsigned long long)res[0].after_alloc.procs[0].fig[THPS_PROC_Rss]);
	printf("With THP always, the read pass costs %llu kB of Rss with the huge zero page and "
	       "%llu kB without it\n(THP never: %llu kB), in %lld faults instead of %lld.\n",
	       (unsigned long long)hzp->procs[0].fig[THPS_PROC_Rss],
	       (unsigned long long)nohzp->procs[0].fig[THPS_PROC_Rss],
	       (unsigned long long)never->procs[0].fig[THPS_PROC_Rss],
	       (long long)(hzp->vm[THPS_VM_pgfault] - res[1].after_alloc.vm[THPS_VM_pgfault]),
	       (long long)(never->vm[THPS_VM_pgfault] - res[0].after_alloc.vm[THPS_VM_pgfault]));
	for (int r = 0; r < NR_RUNS; r++)
		if (res[r].read_mismatches)
			printf("warning: %s read %llu nonzero bytes\n", demo_runs[r].name,
			       (unsigned long long)res[r].read_mismatches);
}

int cmd_demo(int argc, char **argv)
{
	struct demo_result res[NR_RUNS];
	struct knob_sets sets = { 0 };
	uint64_t size_mib = 200;
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc) {
			if (cli_parse_u64(argv[++i], &size_mib) || size_mib == 0 || size_mib > (1 << 20))
				return cli_usage("demo: --size takes a size in MiB, 1 to 1048576");
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &json))
				return 2;
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
			if (cli_add_set(&sets, argv[++i]))
				return 2;
		} else {
			return cli_bad_option("demo", argv[i], "usage: thpsim demo [--size MiB] "
					      "[--set KNOB=VALUE]... [--format text|json]");
		}
	}
	/* each run sets these itself: a --set of them would change nothing */
	for (int k = 0; k < sets.n; k++)
		if (!strcmp(sets.name[k], "transparent_hugepage/enabled") ||
		    !strcmp(sets.name[k], "transparent_hugepage/use_zero_page"))
			return cli_usage("demo: --set %s: the demo's three runs set it themselves "
					 "(never, always with and without the huge zero page); to "
					 "choose it, use 'thpsim run' or 'thpsim compare'",
					 sets.name[k]);
	for (int r = 0; r < NR_RUNS; r++)
		if (run_one(&demo_runs[r], size_mib << 20, &sets, &res[r]))
			return 1;
	if (json)
		print_json(size_mib << 20, res, &sets);
	else
		print_text(size_mib << 20, res, &sets);
	return 0;
}
