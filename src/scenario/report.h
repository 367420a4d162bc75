/*
 * report.h - a snapshot of the figures a person or a script wants after a
 * step: /proc/vmstat counted from a base, each process's smaps_rollup and
 * status figures, and /proc/meminfo; printed as JSON (the REPORT object of
 * demo, run and replay) or as text.
 *
 * It sits with the scenario library, whose "report" step takes one, so that
 * the library need not include the command line; demo (src/cli) uses it
 * from above.
 */
#ifndef THPSIM_REPORT_H
#define THPSIM_REPORT_H

#include "thpsim.h"
#include "util/json.h"

#define REPORT_MAX_PROCS 64

struct report_proc {
	char name[32];
	int pid;
	uint64_t fig[THPS_NR_PROC_ITEMS];
};

struct report {
	int64_t vm[THPS_NR_VM_ITEMS]; /* change since the base */
	uint64_t meminfo[THPS_NR_MEMINFO_ITEMS];
	int nprocs;
	struct report_proc procs[REPORT_MAX_PROCS];
};

/* The vmstat values a report counts from. */
void report_base(thps_machine *m, uint64_t base[THPS_NR_VM_ITEMS]);
/* Take a report of n processes (names may be NULL). */
void report_take(struct report *r, thps_machine *m, const uint64_t base[THPS_NR_VM_ITEMS],
		 thps_proc *const *procs, const char *const *names, int n);
void report_json(struct json *j, const char *key, const struct report *r);

#endif
