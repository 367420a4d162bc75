/*
 * bench_record.h - replay speed and recording overhead for "thpsim bench"
 * (bench_record.c).
 */
#ifndef THPSIM_BENCH_RECORD_H
#define THPSIM_BENCH_RECORD_H

#include <stdint.h>

#include "util/json.h"

struct bench_record {
	uint64_t replay_records, replay_rw_records, replay_reuse_records;
	/* trace records per second, [0] per CPU-second, [1] per wall second */
	double replay_never[2], replay_always[2];       /* first reads */
	double replay_rw_never[2], replay_rw_always[2]; /* reads, then writes */
	double replay_reuse_never[2], replay_reuse_always[2]; /* the same in 8 rounds */
	/* THP always, khugepaged on over off: the three traces' CPU rates,
	 * measured in turns in this run */
	double khug_ratio[3], khug_on[3], khug_off[3];
	uint64_t khug_wakeups[3];
	/* the PMD size off, 64 KiB folios on over off */
	double mthp_ratio[3], mthp_on[3], mthp_off[3];
	/* THP always, every measure over the figures and series alone: the
	 * read-and-write trace and a churn of small mappings in 8 processes */
	double meas_ratio[2], meas_all[2], meas_figs[2];
	/* under a memory.max that makes reclaim split underused THPs, over
	 * no limit (THP always, max_ptes_none 409) */
	double limit_ratio[2], limit_on[2], limit_off[2]; /* [0]: never reached, [1]: 256 MiB */
	uint64_t limit_kills[2], limit_splits[2];
	/* the read-and-write trace under LAYOUTS_N layouts (thpsim replay's
	 * default) on every CPU, against one replay per layout one after
	 * another: wall and process CPU seconds, medians, the replays made and
	 * the CPUs used; [0] its mapping where the kernel puts it on a 2 MiB
	 * boundary (no layout can move it), [1] 4 KiB off one (every layout
	 * is replayed) */
	double layouts_wall[2], layouts_cpu[2], seq_wall[2], seq_cpu[2];
	int layouts_n, layouts_replays[2], layouts_made[2], layouts_ncpu;
	int record_ran;
	char record_skipped[512];            /* why the overhead was not measured */
	double bare_s, record_s, perf_s;     /* median wall times */
	char perf_skipped[64];
	/* record --access over record of hotcold (tests/progs) doing a set
	 * amount of work: median wall times, in turns */
	double access_plain_s, access_s, access_bare_s;
	unsigned long access_passes;
	char access_skipped[512];            /* why not (no DAMON vaddr here) */
	int access_no_damon;                 /* skipped because DAMON cannot be used here */
};

void bench_record_collect(struct bench_record *b);
/* As text on stdout, or as members of the open JSON object j. */
void bench_record_print(const struct bench_record *b, struct json *j);

#endif
