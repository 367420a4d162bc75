/*
 * replay_out.h - what "thpsim replay" and "thpsim compare" share: their
 * common options and the figures they derive from a replay's result.
 */
#ifndef THPSIM_REPLAY_OUT_H
#define THPSIM_REPLAY_OUT_H

#include <stdio.h>

#include "cli.h"
#include "replay/replay.h"
#include "util/json.h"

/* --set, --ram, --quiet: 0 when argv[*i] was one (consumed), 2 on a bad
 * one (message printed), -1 when it is not a common option. */
int replay_parse_common(int argc, char **argv, int *i, struct knob_sets *sets,
			struct replay_opts *o, uint64_t *ram_gib);
void replay_opts_add_sets(struct replay_opts *o, const struct knob_sets *sets);
/* The value of a knob in force during the replay ("?" if unknown). */
const char *replay_knob(const struct replay_result *res, const char *name);
/* Sum of the processes' final figures, each taken when it ended. */
void replay_final_sums(const struct replay_result *res, uint64_t out[THPS_NR_PROC_ITEMS]);
/* Peak Rss and AnonHugePages over the run (kB). */
uint64_t replay_peak_rss(const struct replay_result *res);
uint64_t replay_peak_anon_huge(const struct replay_result *res);
void replay_print_skips(FILE *f, const struct replay_result *res);
/* compare's default policies (name, knobs), and a policy's knobs
 * ("enabled=always,use_zero_page=0", prefixes resolved) added to knobs:
 * 0, or 2 after a usage message naming cmd and the policy. */
/* SVG helpers (compare.c): a round tick step (1, 2 or 5 times a power of
 * ten) for about n ticks up to max; text escaped for SVG, at most n bytes. */
double svg_nice_step(double max, int n);
void svg_escape(FILE *f, const char *c, size_t n);
#define COMPARE_NR_DEFAULT_POLICIES 4
extern const char *const compare_default_policies[COMPARE_NR_DEFAULT_POLICIES][2];
int policy_add_knobs(struct knob_sets *knobs, const char *cmd, const char *name,
		     const char *spec);
/* The memory cgroup: memory.current and memory.peak, the limits, the
 * events and the processes the OOM killer ended (text and JSON). */
void replay_print_memcg(FILE *f, const struct replay_result *res);
void replay_memcg_json(struct json *j, const struct replay_result *res);
double replay_kill_share(const struct replay_result *res, const struct replay_mm *mm);
/* When the trace stopped early: where, what is missing, that the figures
 * are partial (nothing otherwise). */
void replay_print_partial(FILE *f, const struct replay_result *res);
/* When faults found no simulated memory, a warning (label: the policy);
 * returns 1 then. */
int replay_print_oom(FILE *f, const struct replay_result *res, const char *label);
/* Several recordings of one command under the same options: the spread
 * of their figures in format (replay_many.c); the exit status. */
#define REPLAY_MANY_MAX 256
#define REPLAY_XSTR(x) REPLAY_STR(x)
#define REPLAY_STR(x) #x
/* The ranges across layouts (replay_ranges.c): a section of the text
 * report; the JSON "layouts" member; the "range" member of the machine's
 * final or peak object, and of process i's. */
void replay_ranges_text(FILE *f, const struct replay_result *res);
void replay_ranges_json(struct json *j, const struct replay_result *res);
void replay_ranges_json_machine(struct json *j, const struct replay_result *res, int peak);
void replay_ranges_json_mm(struct json *j, const struct replay_result *res, int i, int peak);
/* The threads the layouts run on: the CPUs here. */
int replay_threads(void);
int replay_many(char **paths, int n, const struct replay_opts *o, const char *format);
/* The result's members (the caller has opened the object). */
void replay_json_result(struct json *j, const struct replay_result *res, int with_series);

#endif
