/*
 * measure.h - what a replay reports, as measures the engine feeds.
 *
 * A measure is one question asked of the replay (the figures, the time
 * series, which mapping the memory sits in...): a file of its own with the
 * callbacks it needs, each optional, and one row in REPLAY_MEASURES
 * (measures.c).  The engine (replay.c) calls every measure's callback, in
 * the table's order, at each of these points:
 *
 *   begin      the replay starts: the machine is made, the knobs set
 *   mm_begin   an address space began (exec, fork), its process made
 *   freeing    a call is about to free memory of an address space (munmap,
 *              mremap, MADV_DONTNEED/FREE, brk shrinking, a mapping made
 *              over another): the last moment to see it
 *   mapping    a mapping was made, moved, changed or removed in one
 *              (struct replay_map_event: mmap, brk, exec's VMAs, mremap,
 *              munmap, madvise), after the model made it
 *   fork       an address space was copied from its parent's (after the
 *              child's mm_begin)
 *   touch      the program's first reads or writes of pages
 *              [start, start + pages * 4096) of one, just before the model
 *              takes them
 *   access     an ACCESS record of mm's process (NULL: no process), the
 *              model brought up to it (its faults before it made)
 *   tick       a point of the series: idx is the sample's number on the
 *              schedule, or UINT64_MAX for a point outside it (a
 *              --sample-ms point, or before an address space ends)
 *   mm_end     an address space is about to end: its process is still
 *              there to read
 *   trace_end  the trace (and --settle) is over; what is alive is still
 *              alive, and ends right after
 *   finish     every address space has ended; the machine is still there
 *   mm_free / res_free   the result is freed: what the measure allocated
 *
 * A measure keeps what it computes in the result (replay.h): in the
 * result itself, or per address space in struct replay_mm, so that the
 * command line and the tests read it without the engine.  A new question
 * is a new file and a new row.
 */
#ifndef THPSIM_REPLAY_MEASURE_H
#define THPSIM_REPLAY_MEASURE_H

#include <stdio.h>

#include "engine.h"
#include "util/json.h"

/* What happened to a range of an address space. */
enum replay_map_op {
	REPLAY_MAP_NEW,     /* [start, start+len) mapped (what was there is replaced) */
	REPLAY_MAP_UNMAP,   /* [start, start+len) unmapped */
	REPLAY_MAP_MOVE,    /* mremap: [old, old+old_len) now at [start, start+len) */
	REPLAY_MAP_ADVISE,  /* madvise(advice) over [start, start+len) */
};

/* The call that made a mapping (REPLAY_MAP_NEW). */
enum replay_map_call { REPLAY_CALL_exec, REPLAY_CALL_mmap, REPLAY_CALL_brk, REPLAY_CALL_mremap };

struct replay_map_event {
	enum replay_map_op op;
	uint64_t start, len;
	uint64_t old, old_len;   /* REPLAY_MAP_MOVE */
	int kind;                /* REPLAY_MAP_NEW: enum replay_map_kind (replay.h), or -1:
				    an anonymous mmap, its kind by its length and flags */
	int call;                /* REPLAY_MAP_NEW: enum replay_map_call */
	int prot, flags;         /* REPLAY_MAP_NEW: PROT_*, Linux's MAP_* flags */
	int advice;              /* REPLAY_MAP_ADVISE: Linux's MADV_* */
	const char *caller;      /* REPLAY_MAP_NEW, MOVE: the call's chain, or NULL */
};

struct replay_measure {
	const char *name;
	void (*begin)(struct replay *r);
	void (*mm_begin)(struct replay *r, struct replay_mm *mm);
	void (*freeing)(struct replay *r, struct replay_mm *mm);
	void (*mapping)(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e);
	void (*fork)(struct replay *r, struct replay_mm *parent, struct replay_mm *child);
	void (*touch)(struct replay *r, struct replay_mm *mm, uint64_t start, uint64_t pages, int write);
	void (*access)(struct replay *r, struct replay_mm *mm, const struct trace_event *ev);
	void (*tick)(struct replay *r, uint64_t idx);
	void (*mm_end)(struct replay *r, struct replay_mm *mm);
	void (*trace_end)(struct replay *r);
	void (*finish)(struct replay *r);
	void (*mm_free)(struct replay_mm *mm);
	void (*res_free)(struct replay_result *res);
	/* output, each its own part: members of a process's JSON object, of
	 * the result's, and a section of the text report */
	void (*json_mm)(struct json *j, const struct replay_mm *mm);
	void (*json)(struct json *j, const struct replay_result *res);
	void (*text)(FILE *f, const struct replay_result *res);
};

/* The measures, in the order they are called: NAME is the file
 * measure_NAME.c, which defines "const struct replay_measure
 * measure_NAME". */
#define REPLAY_MEASURES(X) \
	X(figures)         \
	X(series)          \
	X(mappings)        \
	X(work)            \
	X(occupancy)       \
	X(access)

#define REPLAY_MEASURE_DECLARE(name) extern const struct replay_measure measure_##name;
REPLAY_MEASURES(REPLAY_MEASURE_DECLARE)
#undef REPLAY_MEASURE_DECLARE

/* measures.c: each callback of every measure, in the table's order */
void measures_begin(struct replay *r);
void measures_mm_begin(struct replay *r, struct replay_mm *mm);
void measures_freeing(struct replay *r, struct replay_mm *mm);
void measures_mapping(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e);
void measures_fork(struct replay *r, struct replay_mm *parent, struct replay_mm *child);
void measures_touch(struct replay *r, struct replay_mm *mm, uint64_t start, uint64_t pages, int write);
void measures_access(struct replay *r, struct replay_mm *mm, const struct trace_event *ev);
void measures_tick(struct replay *r, uint64_t idx);
void measures_mm_end(struct replay *r, struct replay_mm *mm);
void measures_trace_end(struct replay *r);
void measures_finish(struct replay *r);
void measures_mm_free(struct replay_mm *mm);
void measures_res_free(struct replay_result *res);

/* measure_figures.c: the machine's meminfo now, its peaks updated (for
 * the series' machine points) */
void figures_machine_now(struct replay *r, uint64_t *anon_pages, uint64_t *mem_huge);
/* measure_series.c: a point of the series of mm */
void series_add(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss, uint64_t huge);

#endif
