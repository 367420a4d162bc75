/*
 * replay_ranges.c - the figures of a trace replayed under several address
 * layouts (replay.h, replay_run_layouts): lowest, median and highest, in
 * the text report and in JSON.  The report's own figures stay those of
 * the recorded layout.
 */
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "replay_out.h"

int replay_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

static const uint64_t *machine_values(const struct replay_ranges *g, int f)
{
	return g->machine + (size_t)f * g->n;
}

static const uint64_t *mm_values(const struct replay_ranges *g, int i, int f)
{
	return g->mm + ((size_t)i * RANGE_NR_MM + f) * g->n;
}

/* "18432 (2048–22528, median 4096)", or the value alone when it never varies. */
static void text_value(FILE *f, const uint64_t *v, const double *w, int n)
{
	uint64_t s[3];

	replay_spread_weighted(v, w, n, s);
	if (s[0] == s[2])
		fprintf(f, "%" PRIu64 " (every layout)", v[0]);
	else
		fprintf(f, "%" PRIu64 " (%" PRIu64 "–%" PRIu64 ", median %" PRIu64 ")", v[0], s[0],
			s[2], s[1]);
}

static const char *const machine_labels[] = {
#define LABEL(name, label, expr) label,
	RANGE_MACHINE_FIGURES(LABEL)
};
static const char *const mm_labels[] = { RANGE_MM_FIGURES(LABEL)
#undef LABEL
};

void replay_ranges_text(FILE *f, const struct replay_result *res)
{
	const struct replay_ranges *g = res->ranges;

	if (!g)
		return;
	if (g->fixed[0]) {
		fprintf(f, "\naddress layouts: the figures do not depend on where the heap, the mmap "
			   "base and the stack\nland (%s): the recorded layout alone was replayed.\n",
			g->fixed);
		return;
	}
	if (g->n == 1) {
		fprintf(f, "\naddress layouts: the recorded one alone (--layouts 1).\n");
		return;
	}
	if (g->layouts == 1)
		fprintf(f, "\nunder the recorded address layout (--layouts 1), khugepaged's phases "
			   "varied: the\nrecorded phase's figure (lowest–highest, median), kB or events:\n");
	else if (g->layouts > g->asked)
		fprintf(f, "\nunder %d address layouts (%d asked: the recorded one and one in each of "
			   "the %s's %d\nclasses of offset, drawn from seed %" PRIu64 ", as Linux's address "
			   "randomisation would place\nit): the recorded layout's figure (lowest–highest, "
			   "median), kB or events:\n", g->layouts, g->asked,
			g->mmap_classes ? "mmap base" : "heap", g->layouts - 1, g->seed);
	else
		fprintf(f, "\nunder %d address layouts (the recorded one and %d drawn from seed %" PRIu64
			   ", as Linux's\naddress randomisation would place the heap, the mmap base and "
			   "the stack): the\nrecorded layout's figure (lowest–highest, median), kB or "
			   "events:\n", g->layouts, g->layouts - 1, g->seed);
	fprintf(f, "  (khugepaged's phase: %s)\n", g->phase_why);
	if (g->heap_classes && g->heap_classes < g->n)
		fprintf(f, "  (the heap: %d classes of offset give different heaps, each replayed; "
			   "the median weighs\n  each layout by the share of offsets it stands for)\n",
			g->heap_classes);
	if (g->mmap_classes && g->mmap_classes < g->n)
		fprintf(f, "  (the mmap base: %d classes of offset place its mappings differently, "
			   "each replayed;\n  the median weighs each layout by the share of offsets it "
			   "stands for)\n", g->mmap_classes);
	if (g->made < g->n)
		fprintf(f, "  (only the %s place can change the figures: %d of the %d runs "
			   "replayed, the others'\n  in the same class as one of them)\n",
			g->sensitive == REPLAY_REGION_MMAP ? "mmap base's" : "heap's", g->made, g->n);
	for (int k = 0; k < RANGE_NR_MACHINE; k++) {
		fprintf(f, "  %-22s ", machine_labels[k]);
		text_value(f, machine_values(g, k), g->weight, g->n);
		fprintf(f, "\n");
	}
	for (int i = 0; i < g->nmms && i < res->nmms; i++) {
		uint64_t any = 0, s[3];

		for (int k = 0; k < RANGE_NR_MM; k++) {
			replay_spread(mm_values(g, i, k), g->n, s);
			any |= s[0] != s[2];
		}
		if (!any)
			continue; /* the same in every layout: said by the table above */
		fprintf(f, "  %s %d:\n", res->mms[i]->name, res->mms[i]->pid);
		for (int k = 0; k < RANGE_NR_MM; k++) {
			fprintf(f, "    %-20s ", mm_labels[k]);
			text_value(f, mm_values(g, i, k), g->weight, g->n);
			fprintf(f, "\n");
		}
	}
	if (!g->nmms && res->nmms)
		fprintf(f, "  (per process: the layouts made different processes; the machine's "
			   "figures only)\n");
	fprintf(f, "  (%d replays in %.2f s; --layouts 1: the recorded layout alone)\n", g->n,
		g->seconds);
}

static void json_range(struct json *j, const char *key, const uint64_t *v, const double *w, int n)
{
	uint64_t s[3];

	replay_spread_weighted(v, w, n, s);
	json_begin_object(j, key);
	json_uint(j, "min", s[0]);
	json_uint(j, "median", s[1]);
	json_uint(j, "max", s[2]);
	json_end_object(j);
}

/* REPLAY_REGION_* by bit */
static const char *const region_names[4] = { "exe", "heap", "mmap", "stack" };

void replay_ranges_json(struct json *j, const struct replay_result *res)
{
	const struct replay_ranges *g = res->ranges;

	if (!g)
		return;
	json_begin_object(j, "layouts");
	json_int(j, "asked", g->asked);
	json_int(j, "run", g->layouts);
	json_int(j, "replays", g->n);
	json_int(j, "replays_made", g->made);
	/* layout 0's probe: the regions whose place within 2 MiB can change
	 * the figures (null: not probed) */
	if (g->sensitive >= 0) {
		json_begin_array(j, "regions_that_matter");
		for (int b = 0; b < 4; b++)
			if (g->sensitive & (1 << b))
				json_string(j, NULL, region_names[b]);
		json_end_array(j);
	} else {
		json_null(j, "regions_that_matter");
	}
	json_begin_array(j, "khugepaged_phases_ms");
	for (int p = 0; p < g->phases; p++)
		if (g->phase_ms[p] == UINT64_MAX)
			json_string(j, NULL, "asleep through the trace");
		else
			json_uint(j, NULL, g->phase_ms[p]);
	json_end_array(j);
	json_string(j, "khugepaged_phase", g->phase_why);
	json_uint(j, "seed", g->seed);
	if (g->fixed[0])
		json_string(j, "fixed", g->fixed);
	else
		json_null(j, "fixed");
	json_double(j, "seconds", g->seconds);
	json_begin_array(j, "shifts"); /* of each replay: layout k / phases */
	for (int l = 0; l < g->n; l++) {
		struct replay_shifts d;

		replay_layout_shifts(g->seed, l / g->phases, g->heap_shift[l / g->phases],
				     g->mmap_shift[l / g->phases], &d);
		json_begin_object(j, NULL);
		json_int(j, "exe", d.exe);
		json_int(j, "heap", d.brk);
		json_int(j, "mmap", d.mmap);
		json_int(j, "stack", d.stack);
		json_end_object(j);
	}
	json_end_array(j);
	json_int(j, "heap_classes", g->heap_classes);
	json_int(j, "mmap_classes", g->mmap_classes);
	json_begin_array(j, "weights");
	for (int l = 0; l < g->n; l++)
		json_double(j, NULL, g->weight[l]);
	json_end_array(j);
	json_begin_object(j, "values");
	for (int k = 0; k < RANGE_NR_MACHINE; k++) {
		json_begin_array(j, replay_range_machine_name(k));
		for (int l = 0; l < g->n; l++)
			json_uint(j, NULL, machine_values(g, k)[l]);
		json_end_array(j);
	}
	json_end_object(j);
	json_end_object(j);
}

/* The machine's: peak AnonPages and AnonHugePages, or the final ones and
 * the work counts. */
void replay_ranges_json_machine(struct json *j, const struct replay_result *res, int peak)
{
	static const struct {
		int fig, peak;
		const char *key;
	} rows[] = {
		{ RANGE_peak_AnonPages, 1, "AnonPages" },
		{ RANGE_peak_AnonHugePages, 1, "AnonHugePages" },
		{ RANGE_final_AnonPages, 0, "AnonPages" },
		{ RANGE_final_AnonHugePages, 0, "AnonHugePages" },
		{ RANGE_thp_fault_alloc, 0, "thp_fault_alloc" },
		{ RANGE_thp_fault_fallback, 0, "thp_fault_fallback" },
		{ RANGE_thp_collapse_alloc, 0, "thp_collapse_alloc" },
		{ RANGE_thp_split_pmd, 0, "thp_split_pmd" },
	};
	const struct replay_ranges *g = res->ranges;

	if (!g)
		return;
	json_begin_object(j, "range");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		if (rows[r].peak == peak)
			json_range(j, rows[r].key, machine_values(g, rows[r].fig), g->weight, g->n);
	json_end_object(j);
}

void replay_ranges_json_mm(struct json *j, const struct replay_result *res, int i, int peak)
{
	const struct replay_ranges *g = res->ranges;

	if (!g || i >= g->nmms)
		return;
	json_begin_object(j, "range");
	if (peak) {
		json_range(j, "Rss", mm_values(g, i, RANGE_MM_VmHWM), g->weight, g->n);
		json_range(j, "AnonHugePages", mm_values(g, i, RANGE_MM_peak_AnonHugePages), g->weight, g->n);
	} else {
		json_range(j, "Anonymous", mm_values(g, i, RANGE_MM_Anonymous), g->weight, g->n);
		json_range(j, "AnonHugePages", mm_values(g, i, RANGE_MM_AnonHugePages), g->weight, g->n);
		json_range(j, "Rss", mm_values(g, i, RANGE_MM_Rss), g->weight, g->n);
	}
	json_end_object(j);
}
