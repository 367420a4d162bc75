/*
 * replay_many.c - "thpsim replay A.trace B.trace ...": several recordings
 * of one command, each replayed under the same policy, and the spread of
 * their figures.
 *
 * One recording is one run: a garbage-collected runtime's timing, the
 * threads' interleaving, where the heap landed (with address randomisation
 * on) differ from run to run, and so do the THPs the kernel gives.  Each
 * trace is replayed as it is; the figures of all of them are given as the
 * lowest, the median and the highest, with each trace's own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay_out.h"

/* The figures whose spread is shown: a name (as JSON and CSV say it), a
 * label, and how to read it from a result. */
#define SPREAD_FIGURES(X)                                                                        \
	X(peak_AnonPages, "peak AnonPages kB", r->peak_anon_pages_kb)                              \
	X(final_AnonPages, "final AnonPages kB", r->final_meminfo[THPS_MEM_AnonPages])             \
	X(peak_AnonHugePages, "peak AnonHugePages kB", r->peak_meminfo_huge_kb)                    \
	X(final_AnonHugePages, "final AnonHugePages kB", r->final_meminfo[THPS_MEM_AnonHugePages]) \
	X(sum_final_AnonHugePages, "AnonHugePages at exits kB", sums[THPS_PROC_AnonHugePages])     \
	X(sum_final_Anonymous, "Anonymous at exits kB", sums[THPS_PROC_Anonymous])                 \
	X(thp_fault_alloc, "thp_fault_alloc", r->vm[THPS_VM_thp_fault_alloc])                      \
	X(thp_split_pmd, "thp_split_pmd", r->vm[THPS_VM_thp_split_pmd])                            \
	X(thp_collapse_alloc, "thp_collapse_alloc", r->vm[THPS_VM_thp_collapse_alloc])             \
	X(processes, "processes", (uint64_t)r->nmms)

#define SPREAD_ENUM(name, label, expr) SPREAD_##name,
enum { SPREAD_FIGURES(SPREAD_ENUM) NR_SPREAD };
#undef SPREAD_ENUM

/* Figure f of r; sums: r's processes' final figures (replay_final_sums). */
static uint64_t figure(const struct replay_result *r, const uint64_t *sums, int f)
{
	switch (f) {
#define SPREAD_CASE(name, label, expr) \
	case SPREAD_##name:            \
		return expr;
		SPREAD_FIGURES(SPREAD_CASE)
#undef SPREAD_CASE
	}
	return 0;
}

#define SPREAD_NAME(name, label, expr) #name,
#define SPREAD_LABEL(name, label, expr) label,
static const char *const names[] = { SPREAD_FIGURES(SPREAD_NAME) };
static const char *const labels[] = { SPREAD_FIGURES(SPREAD_LABEL) };
#undef SPREAD_NAME
#undef SPREAD_LABEL

/* Machine figure f over every trace's layouts: each trace weighs alike,
 * its layouts by their weights.  0 when no trace has ranges. */
static int pooled(const struct replay_result *res, int n, int f, uint64_t out[3])
{
	int total = 0, at = 0;
	uint64_t *v;
	double *w;

	for (int t = 0; t < n; t++)
		total += res[t].ranges ? res[t].ranges->n : 0;
	if (!total || !(v = malloc((size_t)total * sizeof(*v))) ||
	    !(w = malloc((size_t)total * sizeof(*w)))) {
		if (total)
			free(v);
		return 0;
	}
	for (int t = 0; t < n; t++) {
		const struct replay_ranges *g = res[t].ranges;

		for (int k = 0; g && k < g->n; k++, at++) {
			v[at] = g->machine[(size_t)f * g->n + k];
			w[at] = g->weight[k] / n;
		}
	}
	replay_spread_weighted(v, w, total, out);
	free(v);
	free(w);
	return 1;
}

static void print_pooled_text(const struct replay_result *res, int n)
{
	int replays = 0;

	for (int t = 0; t < n; t++)
		replays += res[t].ranges ? res[t].ranges->n : 1;
	if (replays == n)
		return; /* one layout each: the table above says it */
	printf("\nwith each trace's address layouts (%d replays; thpsim replay --layouts):\n"
	       "%-26s %12s %12s %12s\n", replays, "figure", "lowest", "median", "highest");
	for (int f = 0; f < RANGE_NR_MACHINE; f++) {
		uint64_t s[3];

		if (pooled(res, n, f, s))
			printf("%-26s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
			       replay_range_machine_name(f), s[0], s[1], s[2]);
	}
}

static void print_text(char **paths, int n, struct replay_result *res, const uint64_t *v)
{
	printf("thpsim replay: %d recordings of %s\n  under %s (each trace's recording machine's "
	       "settings unless --set)\n\n%-26s %12s %12s %12s", n, res[0].command,
	       replay_knob(&res[0], "transparent_hugepage/enabled"), "figure", "lowest", "median",
	       "highest");
	for (int t = 0; t < n; t++)
		printf(" %10s%d", "#", t + 1);
	printf("\n");
	for (int f = 0; f < NR_SPREAD; f++) {
		uint64_t s[3];

		replay_spread(v + (size_t)f * n, n, s);
		printf("%-26s %12" PRIu64 " %12" PRIu64 " %12" PRIu64, labels[f], s[0], s[1], s[2]);
		for (int t = 0; t < n; t++)
			printf(" %11" PRIu64, v[(size_t)f * n + t]);
		printf("\n");
	}
	printf("\n");
	for (int t = 0; t < n; t++)
		printf("#%d %s%s\n", t + 1, paths[t], res[t].partial ? " (PARTIAL: the trace stopped early)" : "");
	print_pooled_text(res, n);
	printf("AnonPages, AnonHugePages: the machine's meminfo (a page shared after fork once), at "
	       "its peak\nand when the last process ended; at exits: each process's figure when it "
	       "ended, summed.\nOne trace's full report: thpsim replay TRACE.\n");
}

static void print_json(char **paths, int n, struct replay_result *res, const uint64_t *v)
{
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "command", res[0].command);
	json_begin_array(&j, "traces");
	for (int t = 0; t < n; t++)
		json_string(&j, NULL, paths[t]);
	json_end_array(&j);
	json_begin_object(&j, "spread");
	for (int f = 0; f < NR_SPREAD; f++) {
		uint64_t s[3];

		replay_spread(v + (size_t)f * n, n, s);
		json_begin_object(&j, names[f]);
		json_uint(&j, "lowest", s[0]);
		json_uint(&j, "median", s[1]);
		json_uint(&j, "highest", s[2]);
		json_begin_array(&j, "values");
		for (int t = 0; t < n; t++)
			json_uint(&j, NULL, v[(size_t)f * n + t]);
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_object(&j);
	json_begin_object(&j, "spread_with_layouts");
	for (int f = 0; f < RANGE_NR_MACHINE; f++) {
		uint64_t s[3];

		if (!pooled(res, n, f, s))
			continue;
		json_begin_object(&j, replay_range_machine_name(f));
		json_uint(&j, "min", s[0]);
		json_uint(&j, "median", s[1]);
		json_uint(&j, "max", s[2]);
		json_end_object(&j);
	}
	json_end_object(&j);
	json_begin_array(&j, "replays");
	for (int t = 0; t < n; t++) {
		json_begin_object(&j, NULL);
		json_string(&j, "trace", paths[t]);
		replay_json_result(&j, &res[t], 0);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

static void print_csv(char **paths, int n, const uint64_t *v)
{
	printf("trace");
	for (int f = 0; f < NR_SPREAD; f++)
		printf(",%s", names[f]);
	printf("\n");
	for (int t = 0; t < n; t++) {
		printf("%s", paths[t]);
		for (int f = 0; f < NR_SPREAD; f++)
			printf(",%" PRIu64, v[(size_t)f * n + t]);
		printf("\n");
	}
}

int replay_many(char **paths, int n, const struct replay_opts *o, const char *format)
{
	struct replay_result *res = calloc((size_t)n, sizeof(*res));
	uint64_t *v = calloc((size_t)n * NR_SPREAD, sizeof(*v));
	int rc = 0, t;
	char err[1024];

	if (!res || !v) {
		free(res);
		free(v);
		msg_error(ENOMEM, "replay");
		return 2;
	}
	for (t = 0; t < n && !rc; t++) {
		if (replay_run_layouts(paths[t], o, replay_threads(), &res[t], err, sizeof(err))) {
			msg_error(0, "replay: %s", err);
			rc = 2;
		} else if (strcmp(res[t].command, res[0].command)) {
			msg_error(0, "replay: %s records '%s', %s '%s': several traces must be runs of "
				  "one command", paths[t], res[t].command, paths[0], res[0].command);
			rc = 2;
		}
	}
	if (!rc) {
		for (t = 0; t < n; t++) {
			uint64_t sums[THPS_NR_PROC_ITEMS];

			replay_final_sums(&res[t], sums);
			for (int f = 0; f < NR_SPREAD; f++)
				v[(size_t)f * n + t] = figure(&res[t], sums, f);
		}
		if (!strcmp(format, "json"))
			print_json(paths, n, res, v);
		else if (!strcmp(format, "csv"))
			print_csv(paths, n, v);
		else
			print_text(paths, n, res, v);
		for (t = 0; t < n; t++)
			rc |= res[t].partial || res[t].skips[REPLAY_SKIP_fault_oom];
	}
	for (t = 0; t < n; t++)
		replay_result_free(&res[t]);
	free(res);
	free(v);
	return rc;
}
