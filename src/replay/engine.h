/*
 * engine.h - the replay's insides, shared by its files (not by callers:
 * they see replay.h).
 *
 * The replay is an engine and measures.  The engine (replay.c) reads the
 * trace and drives one simulated machine: the record handlers
 * (records.c) make each record again in the model, with the foreign
 * ranges and file copies (foreign.c) for what the model does not hold,
 * and the trace's clock (replay.c) wakes khugepaged and takes samples.
 * What is reported is computed by measures (measure.h), each a file with
 * the callbacks it needs, called by the engine through one table
 * (measures.c): an address space begins or ends, a sample is taken, the
 * trace ends, the run finishes.
 */
#ifndef THPSIM_REPLAY_ENGINE_H
#define THPSIM_REPLAY_ENGINE_H

#include <stdint.h>

#include "replay.h"
#include "trace/trace.h"
#include "util/pidtab.h"

#define SAMPLE_FIRST_STRIDE 256
#define RUN_MAX 4096 /* pages in one run of faults */

/* The address layout a replay runs under (layout.c): the shifts of the
 * regions from the recorded layout, in bytes; all 0 for the recorded one. */
struct replay_layout {
	int on, index;
	int probe;                   /* layout 0 probed (layout.c, "Layout 0's probe") */
	int sensitive;               /* the regions (REPLAY_REGION_*) whose shift can matter */
	uint32_t gen;                /* the probe's count of calls */
	struct replay_shifts d;
	int align;                   /* thpsim/anon_thp_align: 0 none, 1 >= 2 MiB, 2 multiples */
	int crowded_noted;
	struct trace_event scratch;  /* a call made in pieces */
};

/* A process: its pid and the address space it uses. */
struct task {
	int32_t pid; /* the pid table's key */
	struct replay_mm *mm;
	int oom_killed; /* the OOM killer ended it, or the process that forked it */
};

struct replay {
	thps_machine *m;
	struct replay_result *res;
	const struct replay_opts *o;
	struct pidtab tasks;      /* struct task */
	int32_t cur_pid;
	struct replay_mm *cur;    /* the current process's address space */
	int cur_killed;           /* the current pid was ended by the OOM killer */
	uint64_t oom_kills_seen;  /* memory.events oom_kill when last looked */
	const uint64_t *nrecords; /* the reader's count of records read */
	uint64_t kill_record;     /* the record whose fault the OOM killer failed, if known */
	uint64_t now_ns;
	/* the sample schedule: a sample every stride records (next_sample
	 * is the next), numbered sample_idx; the series keep the points
	 * whose number is a multiple of keep_every (measure_series.c
	 * doubles both when a series is full) */
	uint64_t stride, next_sample, sample_idx, keep_every;
	uint64_t file_size;
	int final_taken;         /* the machine's final figures are taken */
	double t_start, t_progress;
	int collapse_noted;       /* the MADV_COLLAPSE note was given */
	/* the trace's clock: khugepaged's next wake-up and the next point of
	 * --sample-ms (UINT64_MAX: none), and the earlier of the two */
	uint64_t khug_next_ns, grid_next_ns, timer_ns;
	int settling;             /* --settle: a sample after every wake-up */
	struct replay_layout layout;
	/* the last CALLER record: the chain of caller_pid's next SYSCALL */
	const char *caller;
	int32_t caller_pid;
	/* consecutive faults of one kind on consecutive pages, made as one
	 * thps_touch: one lock and one call for a run instead of each page */
	struct {
		struct replay_mm *mm;
		uint64_t start, n;
		int write;
	} run;
};

/* replay.c */
const char *replay_intern_caller(struct replay_result *res, const char *chain);
const char *replay_caller(const struct replay *r);
__attribute__((format(printf, 2, 3))) void replay_note(struct replay *r, const char *fmt, ...);
struct task *replay_task(struct replay *r, int32_t pid, int create);
/* A new address space, begun now; NULL when out of memory. */
struct replay_mm *replay_mm_new(struct replay *r, int pid, const char *name, thps_proc *proc);
/* One user fewer; the last ends the address space (why: "exit", "exec"...). */
void replay_mm_put(struct replay *r, struct replay_mm *mm, const char *why);
void replay_mm_end(struct replay *r, struct replay_mm *mm, const char *why);
/* Make the pending run of faults. */
void replay_run_flush(struct replay *r);
/* A sample on the schedule (numbered, and the series thinned when full). */
void replay_take_sample(struct replay *r);

/* records.c: one record made again in the model (exec and its VMAs are
 * translated in place first under another layout) */
void replay_exec(struct replay *r, struct trace_event *ev);
void replay_vma(struct replay *r, struct trace_event *ev);
void replay_touch(struct replay *r, const struct trace_event *ev);
void replay_fork(struct replay *r, const struct trace_event *ev);
void replay_exit(struct replay *r, const struct trace_event *ev);
void replay_kfig(struct replay *r, const struct trace_event *ev);
void replay_syscall(struct replay *r, const struct trace_event *ev);
void replay_set_pending_brk(struct replay *r, struct replay_mm *mm);
/* After a call that may have charged: end the processes the OOM killer
 * chose (replay.c). */
void replay_oom_check(struct replay *r);
void replay_count_skip(struct replay *r, int why);
/* A heap boundary at recorded address b (ranges.c reads them). */
void replay_heap_break(struct replay *r, uint64_t b, int start);

/* A fault: joins the run of faults when it is the next page of the same
 * kind in the same address space, else starts a new run. */
static inline void replay_fault(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;

	if (__builtin_expect(!mm, 0)) {
		replay_count_skip(r, r->cur_killed ? REPLAY_SKIP_oom_killed : REPLAY_SKIP_fault_noproc);
		return;
	}
	mm->faults++;
	if (r->run.n && r->run.mm == mm && r->run.write == ev->write &&
	    ev->addr == r->run.start + (r->run.n << 12) && r->run.n < RUN_MAX) {
		r->run.n++;
		return;
	}
	replay_run_flush(r);
	if (__builtin_expect(r->cur != mm, 0)) { /* that flush's OOM kill took it */
		mm->faults--;
		replay_count_skip(r, REPLAY_SKIP_oom_killed);
		return;
	}
	r->run.mm = mm;
	r->run.start = ev->addr;
	r->run.n = 1;
	r->run.write = ev->write;
}

/* layout.c: the trace's addresses under another layout; each takes the
 * record as read, translates it in place and makes it */
void layout_begin(struct replay *r, uint64_t seed, int k);
void layout_exec(struct replay *r, struct replay_mm *mm, struct trace_event *ev);
void layout_vma(struct replay *r, struct replay_mm *mm, struct trace_event *ev);
void layout_fork(struct replay_mm *parent, struct replay_mm *child);
void layout_syscall(struct replay *r, struct trace_event *ev);
void layout_touch(struct replay *r, struct trace_event *ev);
void layout_probe(struct replay *r, uint64_t addr);
/* The shift at recorded address a, and the address where it stops. */
int64_t xlat_at(struct replay_xlat *x, uint64_t a, uint64_t *limit);
void xlat_free(struct replay_xlat *x);

/* settings.c: the knobs in force and khugepaged's settings */
int replay_apply_knobs(struct replay *r, const struct trace_header *h, char *err, size_t errlen);
void replay_khugepaged_settings(struct replay *r, const struct trace_header *h);
/* The memory cgroup's limits: the options', else the trace's. */
void replay_apply_limits(struct replay *r, const struct trace_header *h);

/* foreign.c: file-backed and shared ranges, and the pages copied from
 * private file mappings */
/* 0: not foreign; 1: shared or special; 2: a private file mapping. */
int foreign_is(const struct replay_mm *mm, uint64_t addr);
void foreign_add(struct replay_mm *mm, uint64_t start, uint64_t end, int private_file);
void foreign_remove(struct replay_mm *mm, uint64_t start, uint64_t end);
int foreign_copy(struct replay_mm *to, const struct replay_mm *from);
/* A page of a private file mapping written: an anonymous copy. */
void foreign_cow_insert(struct replay_mm *mm, uint64_t page);
/* The copies now, by private file range (mm->final_file_cow): one sweep of
 * the set.  0, or -ENOMEM (then none). */
int foreign_cow_by_range(struct replay_mm *mm);

#endif
