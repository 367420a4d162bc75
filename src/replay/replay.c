/*
 * replay.c - a recorded trace through the model (replay.h).
 *
 * The loop reads one record at a time (no allocation per record) and keeps
 * the current process's address space at hand, so that a fault, the common
 * record, costs a table-free dispatch and one thps_read or thps_write.
 *
 * Mapping the trace onto the model:
 *  - PROC selects the process; processes are known by pid (the thread
 *    group id: a thread's accesses are its process's).
 *  - EXEC ends the process's previous address space and builds the new one
 *    from the VMA records that follow: anonymous private ones, the stack
 *    (MAP_GROWSDOWN, RLIMIT_STACK as recorded) and the heap (then the break
 *    with thps_brk_init) in the model, the rest as foreign ranges.  Pages
 *    the kernel wrote during exec come as TOUCH records.
 *  - FORK: a thread changes nothing; CLONE_VM without CLONE_THREAD (vfork,
 *    posix_spawn) shares the parent's address space until exec; otherwise
 *    thps_fork copies it.
 *  - SYSCALL: mmap, munmap, mremap, mprotect, madvise and brk are made
 *    again at the addresses the kernel returned (MAP_FIXED), so the model's
 *    layout is the recorded one.  Calls that failed in the kernel are not
 *    made, but MADV_COLLAPSE, which failed under the recorder's
 *    PR_SET_THP_DISABLE and is made under the replay's policy.
 *    mprotect and madvise over a range with foreign parts are made on each
 *    modelled piece.
 *  - FAULT: a 1-byte read or write (writing 1: the data a program writes
 *    is not recorded, and a zero-filled page would be dropped by a THP
 *    split where the program's data would not).
 *  - TOUCH: each page of the modelled mappings in the range is read or
 *    written, as MAP_POPULATE, MADV_POPULATE_* and mlock do.
 *  - EXIT, and the end of the trace, end the address space: its final
 *    figures are taken, then it is torn down.
 *
 * khugepaged on the trace's clock.  Linux's khugepaged is a thread that
 * sleeps until an mm registers (__khugepaged_enter wakes it when the list
 * was empty), then scans pages_to_scan and sleeps scan_sleep_millisecs,
 * again and again while any mm is registered (khugepaged_wait_work); a
 * registration while it sleeps its timed sleep does not wake it early.
 * The replay keeps the time of its next wake-up (khug_next_ns, or none
 * while no mm is registered) and makes the wake-up (thps_khugepaged_run,
 * one) before the first record whose time is past it, so the program's
 * records and khugepaged's scans interleave as the recorded times say.  A
 * wake-up's length is the model's simulated time (the sleep, plus
 * alloc_sleep_millisecs after a failed allocation).  The settings are the
 * recording machine's khugepaged/ files (every trace header has them;
 * a trace without them gets the kernel's defaults, a 10 s sleep and 4096
 * pages).  Not known to the trace: where the machine's khugepaged was in
 * its own cycle, and the other processes it scanned; the replay assumes a
 * khugepaged that had nothing to do until the program registered.  The
 * same clock takes the points of --sample-ms, and --settle runs it on
 * after the last record.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"
#include "trace/linux_abi.h"
#include "util/kprofile.h"
#include "util/pidtab.h"

#define MODEL_MAP_FLAGS (THPS_MAP_GROWSDOWN | THPS_MAP_NORESERVE | THPS_MAP_STACK)
#define SAMPLE_FIRST_STRIDE 256

#define SKIP_NAME(name, desc) #name,
#define SKIP_DESC(name, desc) desc,
static const char *const skip_names[] = { REPLAY_SKIPS(SKIP_NAME) };
static const char *const skip_descs[] = { REPLAY_SKIPS(SKIP_DESC) };
#undef SKIP_NAME
#undef SKIP_DESC

const char *replay_skip_name(int i)
{
	return i >= 0 && i < REPLAY_NR_SKIPS ? skip_names[i] : NULL;
}

const char *replay_skip_desc(int i)
{
	return i >= 0 && i < REPLAY_NR_SKIPS ? skip_descs[i] : NULL;
}

/* A process: its pid and the address space it uses. */
struct task {
	int32_t pid; /* the pid table's key */
	struct replay_mm *mm;
};

struct replay {
	thps_machine *m;
	struct replay_result *res;
	const struct replay_opts *o;
	struct pidtab tasks;      /* struct task */
	int32_t cur_pid;
	struct replay_mm *cur;    /* the current process's address space */
	uint64_t now_ns;
	uint64_t stride, next_sample, sample_idx, keep_every;
	uint64_t file_size;
	int final_taken;         /* the end of the trace fixed the final figures */
	double t_start, t_progress;
	int collapse_noted;       /* the MADV_COLLAPSE note was given */
	/* the trace's clock: khugepaged's next wake-up and the next point of
	 * --sample-ms (UINT64_MAX: none), and the earlier of the two */
	uint64_t khug_next_ns, grid_next_ns, timer_ns;
	int settling;             /* --settle: a sample after every wake-up */
	/* consecutive faults of one kind on consecutive pages, made as one
	 * thps_touch: one lock and one call for a run instead of each page */
	struct {
		struct replay_mm *mm;
		uint64_t start, n;
		int write;
	} run;
};

#define RUN_MAX 4096

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((format(printf, 2, 3))) static void note(struct replay *r, const char *fmt, ...)
{
	va_list ap;

	if (r->res->nnotes >= (int)(sizeof(r->res->notes) / sizeof(r->res->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->res->notes[r->res->nnotes++], sizeof(r->res->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- the tasks, by pid (util/pidtab.h) ---- */
static struct task *task_find(struct replay *r, int32_t pid, int create)
{
	return pidtab_find(&r->tasks, pid, create ? &(int){ 0 } : NULL);
}

/* ---- series ---- */
static void series_add_machine(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss,
			       uint64_t huge, uint64_t anon_pages, uint64_t mem_huge);

static void series_add(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss,
		       uint64_t huge)
{
	series_add_machine(s, t, idx, rss, huge, 0, 0);
}

static void series_add_machine(struct replay_series *s, uint64_t t, uint64_t idx, uint64_t rss,
			       uint64_t huge, uint64_t anon_pages, uint64_t mem_huge)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 16;
		struct replay_point *p = realloc(s->p, (size_t)cap * sizeof(*p));

		if (!p)
			return;
		s->p = p;
		s->cap = cap;
	}
	s->p[s->n++] = (struct replay_point){ t, idx, rss, huge, anon_pages, mem_huge };
}

/* The machine's anonymous memory now (meminfo), its peaks updated: what
 * the program holds, each page once however many processes map it. */
static void machine_now(struct replay *r, uint64_t *anon_pages, uint64_t *mem_huge)
{
	uint64_t mi[THPS_NR_MEMINFO_ITEMS];

	thps_meminfo(r->m, mi);
	*anon_pages = mi[THPS_MEM_AnonPages];
	*mem_huge = mi[THPS_MEM_AnonHugePages];
	if (*anon_pages > r->res->peak_anon_pages_kb)
		r->res->peak_anon_pages_kb = *anon_pages;
	if (*mem_huge > r->res->peak_meminfo_huge_kb)
		r->res->peak_meminfo_huge_kb = *mem_huge;
}

/* The machine's figures at the end of the program: meminfo and the sum
 * of the live processes' Pss (each shared page divided among its
 * mappers, so the sum counts it once). */
static void machine_final(struct replay *r)
{
	struct replay_result *res = r->res;
	uint64_t fig[THPS_NR_PROC_ITEMS], a, h;

	machine_now(r, &a, &h);
	thps_meminfo(r->m, res->final_meminfo);
	res->final_pss_sum_kb = 0;
	for (int i = 0; i < res->nmms; i++)
		if (!res->mms[i]->ended && res->mms[i]->proc) {
			thps_proc_figures(res->mms[i]->proc, fig);
			res->final_pss_sum_kb += fig[THPS_PROC_Pss];
		}
}

/* Keep the points whose sample number is a multiple of every (and the
 * ones taken outside the schedule, idx == UINT64_MAX: starts and ends). */
static void series_thin(struct replay_series *s, uint64_t every)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		if (s->p[i].idx == UINT64_MAX || s->p[i].idx % every == 0)
			s->p[k++] = s->p[i];
	s->n = k;
}

/* A point of every live series now, numbered idx (UINT64_MAX: outside
 * the schedule, never thinned), and the peaks. */
static void series_point(struct replay *r, uint64_t idx)
{
	struct replay_result *res = r->res;
	uint64_t sum_rss = 0, sum_huge = 0, anon, mhuge;

	machine_now(r, &anon, &mhuge);
	for (int i = 0; i < res->nmms; i++) {
		struct replay_mm *mm = res->mms[i];
		uint64_t rss, huge;

		if (mm->ended)
			continue;
		thps_proc_usage(mm->proc, &rss, &huge);
		if (huge > mm->peak_anon_huge_kb)
			mm->peak_anon_huge_kb = huge;
		series_add(&mm->series, r->now_ns, idx, rss, huge);
		sum_rss += rss;
		sum_huge += huge;
	}
	series_add_machine(&res->overall, r->now_ns, idx, sum_rss, sum_huge, anon, mhuge);
	if (sum_rss > res->overall_peak_rss_kb)
		res->overall_peak_rss_kb = sum_rss;
	if (sum_huge > res->overall_peak_anon_huge_kb)
		res->overall_peak_anon_huge_kb = sum_huge;
}

static void take_sample(struct replay *r)
{
	struct replay_result *res = r->res;

	series_point(r, r->sample_idx++);
	/* at REPLAY_SERIES_MAX points, keep every other one and sample half
	 * as often from now on */
	if (res->overall.n >= REPLAY_SERIES_MAX) {
		r->keep_every *= 2;
		r->stride *= 2;
		series_thin(&res->overall, r->keep_every);
		for (int i = 0; i < res->nmms; i++)
			series_thin(&res->mms[i]->series, r->keep_every);
	}
}

static void progress(struct replay *r, struct trace_reader *tr)
{
	double t = wall();

	if (!r->o->progress || t - r->t_progress < 1.0 || t - r->t_start < 2.0)
		return;
	r->t_progress = t;
	fprintf(stderr, "thpsim replay%s%s: %3.0f%% of the trace, %llu records, %.1f M/s\n",
		r->o->label ? " " : "", r->o->label ? r->o->label : "",
		r->file_size ? 100.0 * (double)trace_reader_offset(tr) / (double)r->file_size : 0.0,
		(unsigned long long)tr->nrecords, (double)tr->nrecords / (t - r->t_start) * 1e-6);
}

/* ---- address spaces ---- */
static struct replay_mm *mm_new(struct replay *r, int pid, const char *name, thps_proc *proc)
{
	struct replay_result *res = r->res;
	struct replay_mm *mm;

	if (res->nmms == res->capmms) {
		int cap = res->capmms ? res->capmms * 2 : 16;
		struct replay_mm **v = realloc(res->mms, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		res->mms = v;
		res->capmms = cap;
	}
	mm = calloc(1, sizeof(*mm));
	if (!mm)
		return NULL;
	mm->pid = pid;
	snprintf(mm->name, sizeof(mm->name), "%s", name);
	mm->users = 1;
	mm->proc = proc;
	mm->start_ns = r->now_ns;
	res->mms[res->nmms++] = mm;
	series_add(&mm->series, r->now_ns, UINT64_MAX, 0, 0);
	return mm;
}

/* A point of the overall series outside the schedule: the sum over the
 * live address spaces now (just before one ends: a peak is often there). */
static void overall_point(struct replay *r)
{
	struct replay_result *res = r->res;
	uint64_t sum_rss = 0, sum_huge = 0, anon, mhuge;
	int live = 0;

	machine_now(r, &anon, &mhuge); /* cheap: the peaks are exact */
	for (int i = 0; i < res->nmms; i++)
		live += !res->mms[i]->ended;
	if (live == 1 && !r->final_taken)
		machine_final(r); /* the last one alive, so far: the end */
	if (live > 256)
		return; /* too costly at every exit; the schedule still samples */
	for (int i = 0; i < res->nmms; i++) {
		uint64_t rss, huge;

		if (res->mms[i]->ended)
			continue;
		thps_proc_usage(res->mms[i]->proc, &rss, &huge);
		sum_rss += rss;
		sum_huge += huge;
	}
	series_add_machine(&res->overall, r->now_ns, UINT64_MAX, sum_rss, sum_huge, anon, mhuge);
	if (sum_rss > res->overall_peak_rss_kb)
		res->overall_peak_rss_kb = sum_rss;
	if (sum_huge > res->overall_peak_anon_huge_kb)
		res->overall_peak_anon_huge_kb = sum_huge;
}

static void mm_end(struct replay *r, struct replay_mm *mm, const char *why)
{
	uint64_t rss, huge;

	if (mm->ended)
		return;
	overall_point(r);
	thps_proc_figures(mm->proc, mm->final);
	mm->final_file_cow_kb = mm->cow_n * 4;
	thps_proc_usage(mm->proc, &rss, &huge);
	if (huge > mm->peak_anon_huge_kb)
		mm->peak_anon_huge_kb = huge;
	series_add(&mm->series, r->now_ns, UINT64_MAX, rss, huge);
	thps_exit(mm->proc);
	mm->proc = NULL;
	mm->ended = 1;
	mm->end = why;
	mm->end_ns = r->now_ns;
	if (r->cur == mm)
		r->cur = NULL;
}

static void mm_put(struct replay *r, struct replay_mm *mm, const char *why)
{
	if (mm && --mm->users == 0)
		mm_end(r, mm, why);
}

/* ---- foreign ranges ---- */
static int foreign_find(const struct replay_mm *mm, uint64_t addr)
{
	int lo = 0, hi = mm->nforeign;

	/* the first range ending above addr */
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (mm->foreign[mid][1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 0: not foreign; 1: shared or special; 2: a private file mapping. */
static int is_foreign(const struct replay_mm *mm, uint64_t addr)
{
	int i = foreign_find(mm, addr);

	if (i < mm->nforeign && mm->foreign[i][0] <= addr)
		return mm->foreign[i][2] ? 2 : 1;
	return 0;
}

/* ---- pages copied from private file mappings (an open-addressing set) ---- */
#define COW_EMPTY 0
#define COW_GONE 1 /* page numbers are >= 16: no clash with these */

/* Where the probe for page starts. */
static size_t cow_slot(const struct replay_mm *mm, uint64_t page)
{
	return (size_t)(page * 0x9e3779b97f4a7c15ULL >> 20) & (mm->cow_cap - 1);
}

static void cow_insert(struct replay_mm *mm, uint64_t page)
{
	size_t i, tomb = SIZE_MAX;

	if ((mm->cow_used + 1) * 2 > mm->cow_cap) {
		size_t cap = mm->cow_cap ? mm->cow_cap * 2 : 256, oldcap = mm->cow_cap;
		uint64_t *old = mm->cow, *n = calloc(cap, sizeof(*n));

		if (!n)
			return;
		mm->cow = n;
		mm->cow_cap = cap;
		mm->cow_used = mm->cow_n = 0;
		for (size_t k = 0; k < oldcap; k++)
			if (old[k] > COW_GONE)
				cow_insert(mm, old[k]);
		free(old);
	}
	for (i = cow_slot(mm, page);; i = (i + 1) & (mm->cow_cap - 1)) {
		if (mm->cow[i] == page)
			return;
		if (mm->cow[i] == COW_GONE && tomb == SIZE_MAX)
			tomb = i;
		if (mm->cow[i] == COW_EMPTY)
			break;
	}
	if (tomb == SIZE_MAX) {
		tomb = i;
		mm->cow_used++;
	}
	mm->cow[tomb] = page;
	mm->cow_n++;
}

static void cow_remove_slot(struct replay_mm *mm, size_t k)
{
	mm->cow[k] = COW_GONE;
	mm->cow_n--;
}

/* Forget the copies in [start, end): unmapped, or mapped over.  A range of
 * fewer pages than the set has slots is looked up page by page (a program
 * that maps and unmaps often pays for its calls, not for the set's size);
 * a larger one is a sweep of the set. */
static void cow_remove_range(struct replay_mm *mm, uint64_t start, uint64_t end)
{
	const uint64_t first = start >> 12, last = (end + 4095) >> 12;

	if (last - first < mm->cow_cap) {
		for (uint64_t page = first; mm->cow_n && page < last; page++)
			for (size_t i = cow_slot(mm, page); mm->cow[i] != COW_EMPTY;
			     i = (i + 1) & (mm->cow_cap - 1))
				if (mm->cow[i] == page) {
					cow_remove_slot(mm, i);
					break;
				}
		return;
	}
	for (size_t k = 0; mm->cow_n && k < mm->cow_cap; k++)
		if (mm->cow[k] > COW_GONE && mm->cow[k] >= first && mm->cow[k] < last)
			cow_remove_slot(mm, k);
}

/* Forget the foreign ranges in [start, end), and the copies in them.
 * Copies lie only in private file mappings (cow_insert's callers check
 * is_foreign, and a range loses pages only here), so only the parts of
 * those that the span covers are looked up. */
static void foreign_remove(struct replay_mm *mm, uint64_t start, uint64_t end)
{
	int i = foreign_find(mm, start);

	while (i < mm->nforeign && mm->foreign[i][0] < end) {
		uint64_t s = mm->foreign[i][0], e = mm->foreign[i][1];

		if (mm->foreign[i][2] && mm->cow_n)
			cow_remove_range(mm, s > start ? s : start, e < end ? e : end);

		if (s < start && e > end) { /* a hole in the middle: split */
			if (mm->nforeign == mm->capforeign) {
				int cap = mm->capforeign * 2;
				void *v = realloc(mm->foreign, (size_t)cap * sizeof(*mm->foreign));

				if (!v)
					return;
				mm->foreign = v;
				mm->capforeign = cap;
			}
			memmove(mm->foreign + i + 1, mm->foreign + i,
				(size_t)(mm->nforeign - i) * sizeof(*mm->foreign));
			mm->nforeign++;
			mm->foreign[i][1] = start;
			mm->foreign[i + 1][0] = end;
			mm->foreign[i + 1][2] = mm->foreign[i][2];
			return;
		}
		if (s < start) {
			mm->foreign[i][1] = start;
			i++;
		} else if (e > end) {
			mm->foreign[i][0] = end;
			return;
		} else {
			memmove(mm->foreign + i, mm->foreign + i + 1,
				(size_t)(mm->nforeign - i - 1) * sizeof(*mm->foreign));
			mm->nforeign--;
		}
	}
}

static void foreign_add(struct replay_mm *mm, uint64_t start, uint64_t end, int private_file)
{
	int i;

	if (start >= end)
		return;
	foreign_remove(mm, start, end);
	if (mm->nforeign == mm->capforeign) {
		int cap = mm->capforeign ? mm->capforeign * 2 : 32;
		void *v = realloc(mm->foreign, (size_t)cap * sizeof(*mm->foreign));

		if (!v)
			return;
		mm->foreign = v;
		mm->capforeign = cap;
	}
	i = foreign_find(mm, start);
	memmove(mm->foreign + i + 1, mm->foreign + i, (size_t)(mm->nforeign - i) * sizeof(*mm->foreign));
	mm->foreign[i][0] = start;
	mm->foreign[i][1] = end;
	mm->foreign[i][2] = (uint64_t)private_file;
	mm->nforeign++;
}

static int foreign_copy(struct replay_mm *to, const struct replay_mm *from)
{
	for (size_t k = 0; k < from->cow_cap; k++)
		if (from->cow[k] > COW_GONE)
			cow_insert(to, from->cow[k]);
	if (!from->nforeign)
		return 0;
	to->foreign = malloc((size_t)from->nforeign * sizeof(*to->foreign));
	if (!to->foreign)
		return -ENOMEM;
	memcpy(to->foreign, from->foreign, (size_t)from->nforeign * sizeof(*to->foreign));
	to->nforeign = to->capforeign = from->nforeign;
	return 0;
}

/* ---- the modelled pieces of a range ---- */
struct vma_list {
	int n, cap;
	struct {
		uint64_t start, end;
		int prot;
	} *v;
};

static void collect_vma(void *arg, uint64_t start, uint64_t end, int prot, const char *flags)
{
	struct vma_list *l = arg;

	(void)flags;
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 64;
		void *v = realloc(l->v, (size_t)cap * sizeof(*l->v));

		if (!v)
			return;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].start = start;
	l->v[l->n].end = end;
	l->v[l->n].prot = prot;
	l->n++;
}

enum piece_op { PIECE_MPROTECT, PIECE_MADVISE, PIECE_TOUCH_READ, PIECE_TOUCH_WRITE,
		PIECE_POPULATE };

/* Apply op to each modelled piece of [start, start+len).  Returns the first
 * error, 0 when all pieces took it. */
static int for_each_piece(struct replay *r, thps_proc *p, uint64_t start, uint64_t len,
			  enum piece_op op, int arg)
{
	struct vma_list l = { 0 };
	uint64_t end = start + len < start ? UINT64_MAX : start + len;
	int err = 0;

	thps_for_each_vma(p, collect_vma, &l);
	for (int i = 0; i < l.n; i++) {
		uint64_t s = l.v[i].start > start ? l.v[i].start : start;
		uint64_t e = l.v[i].end < end ? l.v[i].end : end;
		int e2 = 0;

		if (s >= e)
			continue;
		switch (op) {
		case PIECE_MPROTECT:
			e2 = thps_mprotect(p, s, e - s, arg);
			break;
		case PIECE_MADVISE:
			e2 = thps_madvise(p, s, e - s, arg);
			break;
		case PIECE_TOUCH_READ:
		case PIECE_TOUCH_WRITE:
		case PIECE_POPULATE: {
			int write = op == PIECE_TOUCH_WRITE ||
				    (op == PIECE_POPULATE && (l.v[i].prot & THPS_PROT_WRITE));
			struct thps_touch t = { .addr = s, .len = e - s, .step = THPS_PAGE_SIZE,
						.op = write ? THPS_TOUCH_DIRTY : THPS_TOUCH_READ,
						.value = 1 };

			if (!(l.v[i].prot & (THPS_PROT_READ | THPS_PROT_WRITE | THPS_PROT_EXEC)))
				continue; /* PROT_NONE: the kernel does not populate it */
			e2 = thps_touch(p, &t);
			break;
		}
		}
		if (e2 && !err)
			err = e2;
	}
	free(l.v);
	(void)r;
	return err;
}

/* ---- records ---- */
static void count_skip(struct replay *r, int why)
{
	r->res->skips[why]++;
}

static void model_failed(struct replay *r, const char *call, int err)
{
	const char *why = thps_last_error(r->m);

	count_skip(r, REPLAY_SKIP_call_failed);
	note(r, "%s: the kernel did it, the model refused it: %s%s%s%s", call, strerror(-err),
	     *why ? " (" : "", why, *why ? ")" : ""); /* no empty "()" */
}

/* A fault the model could not take: why. */
static void fault_failed(struct replay *r, struct replay_mm *mm, uint64_t addr, int write, int err)
{
	int foreign;

	if (err == -ENOMEM)
		count_skip(r, REPLAY_SKIP_fault_oom);
	else if ((foreign = is_foreign(mm, addr))) {
		count_skip(r, REPLAY_SKIP_fault_file);
		if (foreign == 2 && write)
			cow_insert(mm, addr >> 12);
	} else { /* no mapping, or one that does not allow it: a SIGSEGV */
		count_skip(r, REPLAY_SKIP_fault_unmapped);
	}
}

/* Make the pending run of faults. */
static void run_flush(struct replay *r)
{
	struct replay_mm *mm = r->run.mm;

	while (r->run.n) {
		struct thps_touch t = { .addr = r->run.start, .len = r->run.n << 12, .step = 4096,
					.op = r->run.write ? THPS_TOUCH_DIRTY : THPS_TOUCH_READ,
					.value = 1 };
		uint64_t ok;
		int err = thps_touch(mm->proc, &t);

		if (__builtin_expect(!err, 1))
			break;
		/* pages before the failing one are done; go on after it */
		ok = t.done ? (t.done - 1) / 4096 + 1 : 0;
		fault_failed(r, mm, r->run.start + (ok << 12), r->run.write, err);
		r->run.start += (ok + 1) << 12;
		r->run.n -= ok + 1;
	}
	r->run.n = 0;
}

static inline void do_fault(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;

	if (__builtin_expect(!mm, 0)) {
		count_skip(r, REPLAY_SKIP_fault_noproc);
		return;
	}
	mm->faults++;
	if (r->run.n && r->run.mm == mm && r->run.write == ev->write &&
	    ev->addr == r->run.start + (r->run.n << 12) && r->run.n < RUN_MAX) {
		r->run.n++;
		return;
	}
	run_flush(r);
	r->run.mm = mm;
	r->run.start = ev->addr;
	r->run.n = 1;
	r->run.write = ev->write;
}

static void set_pending_brk(struct replay *r, struct replay_mm *mm)
{
	int err;

	if (!mm->brk_pending)
		return;
	mm->brk_pending = 0;
	err = thps_brk_init(mm->proc, mm->pending_start_brk, mm->pending_brk);
	if (err)
		note(r, "exec of %s: the break %#llx..%#llx could not be set: %s", mm->name,
		     (unsigned long long)mm->pending_start_brk, (unsigned long long)mm->pending_brk,
		     thps_last_error(r->m));
}

static void do_exec(struct replay *r, const struct trace_event *ev)
{
	struct task *t = task_find(r, ev->pid, 1);
	const char *base = strrchr(ev->name, '/');
	struct replay_mm *mm;
	thps_proc *p;
	int err;

	if (!t)
		return;
	if (t->mm)
		mm_put(r, t->mm, "exec");
	t->mm = NULL;
	r->cur = NULL;
	err = thps_proc_new(r->m, &p);
	if (err) {
		note(r, "exec of %s: no memory for a new process", ev->name);
		return;
	}
	mm = mm_new(r, ev->pid, base ? base + 1 : ev->name, p);
	if (!mm) {
		thps_exit(p);
		return;
	}
	if (ev->stack_limit)
		thps_set_stack_rlimit(p, ev->stack_limit);
	/* --as-recorded: the recorder's PR_SET_THP_DISABLE (fork inherits it) */
	if (r->o->thp_disabled)
		thps_prctl_thp_disable(p, 1);
	mm->pending_start_brk = ev->start_brk;
	mm->pending_brk = ev->brk;
	mm->brk_pending = ev->start_brk != 0;
	t->mm = mm;
	r->cur = mm;
	r->cur_pid = ev->pid;
}

static void do_vma(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;
	uint64_t out;
	int err, flags = THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | THPS_MAP_FIXED;

	if (!mm)
		return;
	if (ev->kind > TRACE_VMA_HEAP || (ev->prot & TRACE_VMA_SHARED) ||
	    ev->addr + ev->len > (1ULL << 47)) {
		foreign_add(mm, ev->addr, ev->addr + ev->len,
			    ev->kind == TRACE_VMA_FILE && !(ev->prot & TRACE_VMA_SHARED));
		return;
	}
	if (ev->kind == TRACE_VMA_STACK)
		flags |= THPS_MAP_GROWSDOWN;
	err = thps_mmap(mm->proc, ev->addr, ev->len, ev->prot & 7, flags, &out);
	if (err)
		model_failed(r, "exec's mapping", err);
	if (ev->kind == TRACE_VMA_HEAP)
		set_pending_brk(r, mm);
}

static void do_touch(struct replay *r, const struct trace_event *ev)
{
	static const enum piece_op ops[] = { PIECE_TOUCH_READ, PIECE_TOUCH_WRITE, PIECE_POPULATE };
	struct replay_mm *mm = r->cur;
	int err;

	if (!mm)
		return;
	if (ev->kind == TRACE_TOUCH_WRITE && ev->len <= (1ULL << 32)) {
		/* written pages of private file mappings are anonymous copies */
		for (uint64_t a = ev->addr & ~4095ULL; a < ev->addr + ev->len; a += 4096)
			if (is_foreign(mm, a) == 2)
				cow_insert(mm, a >> 12);
	}
	err = for_each_piece(r, mm->proc, ev->addr, ev->len, ops[ev->kind], 0);
	if (err == -ENOMEM)
		count_skip(r, REPLAY_SKIP_fault_oom);
}

static void do_fork(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *parent = r->cur, *mm;
	struct task *t;
	thps_proc *child;
	int err;

	if (ev->clone_flags & LINUX_CLONE_THREAD)
		return; /* a thread: its accesses are its process's */
	t = task_find(r, ev->child, 1);
	if (!t)
		return;
	if (t->mm) /* a pid reused without an EXIT: end the old one */
		mm_put(r, t->mm, "exit");
	t->mm = NULL;
	if (!parent) {
		note(r, "fork by pid %d, which the trace never introduced", ev->pid);
		return;
	}
	if (ev->clone_flags & LINUX_CLONE_VM) {
		/* vfork or posix_spawn: the same address space until exec */
		parent->users++;
		t->mm = parent;
		return;
	}
	err = thps_fork(parent->proc, &child);
	if (err) {
		note(r, "fork of %s: %s", parent->name, thps_last_error(r->m));
		return;
	}
	mm = mm_new(r, ev->child, parent->name, child);
	if (!mm) {
		thps_exit(child);
		return;
	}
	foreign_copy(mm, parent);
	t->mm = mm;
	t = task_find(r, r->cur_pid, 0); /* the table may have moved */
	r->cur = t ? t->mm : NULL;
}

static void do_exit(struct replay *r, const struct trace_event *ev)
{
	struct task *t = task_find(r, ev->pid, 0);

	/* the status as wait(2) has it: a signal's number in the low bits */
	static const char *const by_signal[] = {
		"exit", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
		"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
		"SIGTERM",
	};
	int sig = (int)(ev->status & 0x7f);

	if (!t)
		return;
	mm_put(r, t->mm, sig == 0 || sig == 0x7f ? "exit"
			 : sig < (int)(sizeof(by_signal) / sizeof(by_signal[0])) ? by_signal[sig]
										: "a signal");
	t->mm = NULL;
	pidtab_del(&r->tasks, ev->pid);
	r->cur = NULL;
}

static void do_kfig(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;

	if (!mm)
		return;
	mm->have_kfig = 1;
	for (int i = 0; i < ev->nkfig; i++) {
		if (!strcmp(ev->kfig[i].name, "Anonymous"))
			mm->kfig_anonymous = ev->kfig[i].kb;
		else if (!strcmp(ev->kfig[i].name, "AnonHugePages"))
			mm->kfig_anon_huge = ev->kfig[i].kb;
		else if (!strcmp(ev->kfig[i].name, "Rss"))
			mm->kfig_rss = ev->kfig[i].kb;
	}
	thps_proc_figures(mm->proc, mm->model_at_kfig);
	mm->kfig_file_cow_kb = mm->cow_n * 4;
}

static void sys_mmap(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	uint64_t addr = (uint64_t)ev->ret, len = ev->args[1], out;
	int flags = (int)ev->args[3], prot = (int)ev->args[2] & 7, err;

	if ((flags & LINUX_MAP_TYPE) != LINUX_MAP_PRIVATE || !(flags & LINUX_MAP_ANONYMOUS) ||
	    (flags & LINUX_MAP_HUGETLB)) {
		/* file-backed, shared or hugetlbfs: whatever the model had there
		 * was replaced */
		count_skip(r, REPLAY_SKIP_mmap_foreign);
		thps_munmap(mm->proc, addr, len);
		foreign_add(mm, addr, addr + ((len + 4095) & ~4095ULL),
			    (flags & LINUX_MAP_TYPE) == LINUX_MAP_PRIVATE && !(flags & LINUX_MAP_ANONYMOUS));
		return;
	}
	foreign_remove(mm, addr, addr + ((len + 4095) & ~4095ULL));
	err = thps_mmap(mm->proc, addr, len, prot,
			THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | THPS_MAP_FIXED |
				(flags & MODEL_MAP_FLAGS),
			&out);
	if (err)
		model_failed(r, "mmap", err);
}

static void sys_mremap(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	uint64_t old = ev->args[0], old_len = ev->args[1], new_len = ev->args[2];
	uint64_t to = (uint64_t)ev->ret, out;
	int flags = (int)ev->args[3], err;

	if (flags & 4) { /* MREMAP_DONTUNMAP */
		count_skip(r, REPLAY_SKIP_call_unmodelled);
		note(r, "mremap(MREMAP_DONTUNMAP) is not modelled");
		return;
	}
	if (is_foreign(mm, old)) {
		int priv = is_foreign(mm, old) == 2;

		foreign_remove(mm, old, old + old_len);
		thps_munmap(mm->proc, to, new_len);
		foreign_add(mm, to, to + ((new_len + 4095) & ~4095ULL), priv);
		return;
	}
	foreign_remove(mm, to, to + new_len);
	if (to == old)
		err = thps_mremap(mm->proc, old, old_len, new_len, 0, 0, &out);
	else
		err = thps_mremap(mm->proc, old, old_len, new_len,
				  THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED, to, &out);
	if (err)
		model_failed(r, "mremap", err);
}

/*
 * MADV_COLLAPSE: made whatever the kernel returned.  The recorder runs the
 * program under PR_SET_THP_DISABLE, which MADV_COLLAPSE obeys, so the
 * recorded call failed with EINVAL and collapsed nothing; the model makes
 * it under the replay's policy, as the program would have without the
 * recorder, and its own answer (0, EINVAL, EAGAIN, ENOMEM) is the
 * program's business, not a failure of the replay.
 */
static void sys_madvise_collapse(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	thps_madvise(mm->proc, ev->args[0], ev->args[1], THPS_MADV_COLLAPSE);
	if (!r->collapse_noted) {
		r->collapse_noted = 1;
		note(r, "MADV_COLLAPSE is made in the model; the recorded result is not compared "
			"(the recorder's PR_SET_THP_DISABLE made it fail)");
	}
}

static void sys_madvise(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	uint64_t a = ev->args[0], len = ev->args[1];
	int advice = (int)ev->args[2], model, err;

	switch (advice) {
	case LINUX_MADV_DONTNEED:
	case LINUX_MADV_DONTNEED_LOCKED:
	case LINUX_MADV_GUARD_INSTALL: /* zaps the range too */
		model = THPS_MADV_DONTNEED;
		break;
	case LINUX_MADV_FREE:
		model = THPS_MADV_FREE;
		break;
	case LINUX_MADV_HUGEPAGE:
		model = THPS_MADV_HUGEPAGE;
		break;
	case LINUX_MADV_NOHUGEPAGE:
		model = THPS_MADV_NOHUGEPAGE;
		break;
	case LINUX_MADV_COLLAPSE:
		sys_madvise_collapse(r, mm, ev);
		return;
	case LINUX_MADV_NORMAL: case LINUX_MADV_RANDOM:
	case LINUX_MADV_SEQUENTIAL: case LINUX_MADV_WILLNEED:
	case LINUX_MADV_DONTDUMP: case LINUX_MADV_DODUMP:
	case LINUX_MADV_COLD: case LINUX_MADV_PAGEOUT:             /* no swap here */
	case LINUX_MADV_POPULATE_READ: case LINUX_MADV_POPULATE_WRITE: /* TOUCH records do it */
	case LINUX_MADV_GUARD_REMOVE:
		return;
	default: /* DONTFORK, WIPEONFORK, MERGEABLE, ... */
		count_skip(r, REPLAY_SKIP_call_unmodelled);
		if (advice == LINUX_MADV_DONTFORK || advice == LINUX_MADV_WIPEONFORK)
			note(r, "madvise advice %d (DONTFORK/WIPEONFORK) is not modelled", advice);
		return;
	}
	err = thps_madvise(mm->proc, a, len, model);
	if (err == -ENOMEM) /* holes: foreign parts in the range */
		err = for_each_piece(r, mm->proc, a, len, PIECE_MADVISE, model);
	if (err && err != -ENOMEM)
		model_failed(r, "madvise", err);
}

static void do_syscall(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;
	int err;

	r->res->syscalls++;
	if (!mm)
		return;
	/* failed in the kernel: nothing changed (brk answers with the break;
	 * MADV_COLLAPSE may have collapsed part of its range) */
	if (ev->ret < 0 && ev->ret > -4096 && ev->nr != LINUX_NR_brk &&
	    !(ev->nr == LINUX_NR_madvise && ev->args[2] == LINUX_MADV_COLLAPSE))
		return;
	set_pending_brk(r, mm);
	switch (ev->nr) {
	case LINUX_NR_mmap:
		sys_mmap(r, mm, ev);
		break;
	case LINUX_NR_munmap:
		foreign_remove(mm, ev->args[0], ev->args[0] + ev->args[1]);
		err = thps_munmap(mm->proc, ev->args[0], ev->args[1]);
		if (err)
			model_failed(r, "munmap", err);
		break;
	case LINUX_NR_mprotect:
	case LINUX_NR_pkey_mprotect:
		err = thps_mprotect(mm->proc, ev->args[0], ev->args[1], (int)ev->args[2] & 7);
		if (err == -ENOMEM)
			err = for_each_piece(r, mm->proc, ev->args[0], ev->args[1], PIECE_MPROTECT,
					     (int)ev->args[2] & 7);
		if (err && err != -ENOMEM)
			model_failed(r, "mprotect", err);
		break;
	case LINUX_NR_mremap:
		sys_mremap(r, mm, ev);
		break;
	case LINUX_NR_madvise:
		sys_madvise(r, mm, ev);
		break;
	case LINUX_NR_brk: {
		uint64_t out = 0;

		if (!ev->args[0] || (uint64_t)ev->ret != ev->args[0])
			break; /* a query, or refused: brk(2) then returns the old break */
		err = thps_brk(mm->proc, ev->args[0], &out);
		if (err || out != (uint64_t)ev->ret) {
			count_skip(r, REPLAY_SKIP_brk_diverged);
			if (r->res->skips[REPLAY_SKIP_brk_diverged] == 1)
				note(r, "brk(%#llx): the kernel returned %#llx, the model %#llx",
				     (unsigned long long)ev->args[0], (unsigned long long)ev->ret,
				     (unsigned long long)out);
		}
		break;
	}
	case LINUX_NR_prctl:
		if (ev->args[0] == LINUX_PR_SET_THP_DISABLE) {
			if (ev->args[1] && ev->args[2]) {
				count_skip(r, REPLAY_SKIP_call_unmodelled);
				note(r, "prctl(PR_SET_THP_DISABLE) with flags %#llx is not modelled",
				     (unsigned long long)ev->args[2]);
			} else {
				thps_prctl_thp_disable(mm->proc, ev->args[1] != 0);
			}
		}
		break;
	case LINUX_NR_shmat: /* System V shared memory */
		count_skip(r, REPLAY_SKIP_mmap_foreign);
		break;
	case LINUX_NR_process_madvise:
		count_skip(r, REPLAY_SKIP_call_unmodelled);
		note(r, "process_madvise is not modelled");
		break;
	default: /* fork, exec, mlock...: their own records do the work */
		break;
	}
}

/* ---- the run ---- */
static int apply_knobs(struct replay *r, const struct trace_header *h, char *err, size_t errlen)
{
	struct replay_result *res = r->res;
	size_t un = 0;

	if (!r->o->no_trace_knobs) {
		const char *release = trace_header_get(h, "kernel");
		struct kprofile kp;

		/* a trace from before kernel profiles: its kernel's version */
		if (!trace_header_get(h, "thpsim/kernel") && !kprofile_from_release(&kp, release)) {
			kprofile_apply(&kp, r->m);
			note(r, "the trace names no kernel profile: Linux %s's, from its kernel %s",
			     kp.version, release);
		}
		for (int i = 0; i < h->n; i++) {
			const char *k = h->key[i];
			int e;

			if (!strchr(k, '/'))
				continue; /* not a setting */
			e = thps_knob_set(r->m, k, h->value[i]);
			/* settings without effect on anonymous memory, or at the
			 * value the model has anyway, are not worth a word */
			if (e == -ENOENT && (strstr(k, "shmem_enabled") || strstr(k, "anon_beside_full") ||
					     (strstr(k, "hugepages-") && !strcmp(h->value[i], "never")) ||
					     strstr(k, "khugepaged/")))
				continue;
			if (e == -ENOENT && un + strlen(k) + 3 < sizeof(res->unmodelled_knobs))
				un += (size_t)snprintf(res->unmodelled_knobs + un,
						       sizeof(res->unmodelled_knobs) - un, "%s%s",
						       un ? ", " : "", k);
			else if (e && e != -ENOENT)
				note(r, "the recording machine's %s=%s: %s", k, h->value[i],
				     thps_last_error(r->m));
		}
	}
	{
		int bad;

		/* the options' (thpsim/kernel=auto: the running kernel's profile) */
		if (knob_sets_apply(r->m, &r->o->knobs, &bad)) {
			snprintf(err, errlen, "%s=%s: %s", r->o->knobs.name[bad],
				 r->o->knobs.value[bad], thps_last_error(r->m));
			return -EINVAL;
		}
	}
	/* A kernel without the zero page maps a page at the first read, so a
	 * later write takes no fault and the recorder never sees it. */
	{
		const char *rec = trace_header_get(h, "thpsim/zero_page");
		char now[8];

		thps_knob_get(r->m, "thpsim/zero_page", now, sizeof(now));
		if (rec && !strcmp(rec, "0") && !strcmp(now, "1"))
			note(r, "recorded on a kernel without the zero page: a write to a page "
				"first read took no fault there and is not in the trace, so under "
				"thpsim/zero_page=1 such pages stay zero pages and their memory is "
				"missing from this prediction");
	}
	/* record every knob's value in force */
	for (int i = 0; thps_knob_name(i) && res->nknobs < REPLAY_MAX_KNOBS; i++) {
		snprintf(res->knob_name[res->nknobs], sizeof(res->knob_name[0]), "%s",
			 thps_knob_name(i));
		thps_knob_get(r->m, thps_knob_name(i), res->knob_value[res->nknobs],
			      sizeof(res->knob_value[0]));
		res->nknobs++;
	}
	return 0;
}

/* The khugepaged settings in force (the recording machine's unless --set
 * changed them), for the result; a trace without them says so. */
static void khugepaged_settings(struct replay *r, const struct trace_header *h)
{
	char v[32];

	r->res->khugepaged_on = !r->o->no_khugepaged;
	thps_knob_get(r->m, "transparent_hugepage/khugepaged/scan_sleep_millisecs", v, sizeof(v));
	r->res->khugepaged_scan_sleep_ms = strtoull(v, NULL, 10);
	thps_knob_get(r->m, "transparent_hugepage/khugepaged/pages_to_scan", v, sizeof(v));
	r->res->khugepaged_pages_to_scan = strtoull(v, NULL, 10);
	if (!r->o->no_khugepaged && !r->o->no_trace_knobs &&
	    !trace_header_get(h, "transparent_hugepage/khugepaged/scan_sleep_millisecs"))
		note(r, "the trace has no khugepaged settings: khugepaged runs with Linux's defaults "
			"(scan_sleep_millisecs=10000, pages_to_scan=4096) unless --set says otherwise");
}

/* ---- the trace's clock: khugepaged and --sample-ms ---- */
static void timer_update(struct replay *r)
{
	r->timer_ns = r->khug_next_ns < r->grid_next_ns ? r->khug_next_ns : r->grid_next_ns;
}

/* After a record that may have registered an mm: a khugepaged with
 * nothing to do wakes now (__khugepaged_enter's wake_up_interruptible). */
static void khug_check_registered(struct replay *r)
{
	struct thps_khugepaged_stats k;

	if (r->o->no_khugepaged || r->khug_next_ns != UINT64_MAX)
		return;
	thps_khugepaged_stats(r->m, &k);
	if (k.mm_slots) {
		r->khug_next_ns = r->now_ns;
		timer_update(r);
	}
}

/* One wake-up of khugepaged at khug_next_ns, and when the next one is. */
static void khug_wake(struct replay *r)
{
	struct thps_khugepaged_stats k0, k;

	r->now_ns = r->khug_next_ns;
	thps_khugepaged_stats(r->m, &k0);
	thps_khugepaged_run(r->m, 1, 0);
	thps_khugepaged_stats(r->m, &k);
	if (k.wakeups == k0.wakeups) {
		/* no mm registered: it sleeps until one is */
		r->khug_next_ns = UINT64_MAX;
		return;
	}
	r->res->khugepaged_wakeups++;
	r->res->khugepaged_collapsed += k.pages_collapsed - k0.pages_collapsed;
	/* scan_sleep_millisecs=0 scans back to back; a scan takes time */
	r->khug_next_ns += (k.now_ms - k0.now_ms ? k.now_ms - k0.now_ms : 1) * 1000000ULL;
	if (r->settling || k.pages_collapsed != k0.pages_collapsed)
		take_sample(r);
	if (!k.mm_slots)
		r->khug_next_ns = UINT64_MAX; /* the last one left while it scanned */
}

/* Everything due before time t (ns of the trace), in time order; the
 * faults gathered so far come first. */
static void timers_run(struct replay *r, uint64_t t)
{
	run_flush(r);
	while (r->timer_ns < t) {
		if (r->khug_next_ns <= r->grid_next_ns) {
			khug_wake(r);
		} else {
			r->now_ns = r->grid_next_ns;
			series_point(r, UINT64_MAX); /* never thinned */
			r->grid_next_ns += r->o->sample_every_ms * 1000000ULL;
		}
		timer_update(r);
	}
}

/*
 * --settle: after the last record the processes still alive stay, idle, and
 * the trace's clock goes on for settle_ms: khugepaged keeps waking (from
 * where it was; with --khugepaged off it starts at the end of the trace),
 * with a sample after each wake-up.
 */
static void settle(struct replay *r, uint64_t settle_ms)
{
	const uint64_t end = r->res->duration_ns;
	struct thps_khugepaged_stats k0, k;

	thps_khugepaged_stats(r->m, &k0);
	if (r->khug_next_ns == UINT64_MAX && k0.mm_slots)
		r->khug_next_ns = end;
	timer_update(r);
	r->settling = 1;
	timers_run(r, end + settle_ms * 1000000ULL);
	r->settling = 0;
	r->now_ns = end + settle_ms * 1000000ULL;
	thps_khugepaged_stats(r->m, &k);
	r->res->settle_ms = settle_ms;
	r->res->settle_collapsed = k.pages_collapsed - k0.pages_collapsed;
	if (k.wakeups == k0.wakeups)
		note(r, "--settle: no process alive at the end of the trace is registered with "
			"khugepaged (none left, or none with an eligible VMA): nothing changes");
	else
		note(r, "--settle: khugepaged ran %llu simulated ms (%llu wake-ups) after the last "
		     "record and collapsed %llu ranges", (unsigned long long)settle_ms,
		     (unsigned long long)(k.wakeups - k0.wakeups),
		     (unsigned long long)(k.pages_collapsed - k0.pages_collapsed));
}

int replay_run(const char *path, const struct replay_opts *o, struct replay_result *res,
	       char *err, size_t errlen)
{
	struct trace_reader *tr = malloc(sizeof(*tr));
	struct trace_event *ev = malloc(sizeof(*ev));
	struct replay r = { .tasks = PIDTAB_INIT(struct task, 64) };
	struct thps_config cfg = { .ram_bytes = o->ram_bytes ? o->ram_bytes : 64ULL << 30 };
	struct stat st;
	const char *v;
	int e, ret = 0;

	memset(res, 0, sizeof(*res));
	if (!tr || !ev) {
		free(tr);
		free(ev);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e = trace_reader_open(tr, path);
	if (e) {
		snprintf(err, errlen, "%s", tr->err);
		free(tr);
		free(ev);
		return e;
	}
	if ((v = trace_header_get(&tr->header, "command")))
		snprintf(res->command, sizeof(res->command), "%s", v);
	if ((v = trace_header_get(&tr->header, "kernel")))
		snprintf(res->kernel, sizeof(res->kernel), "%s", v);
	r.file_size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	e = thps_machine_new(&cfg, &r.m);
	if (e) {
		snprintf(err, errlen, "cannot create a simulated machine of %llu GiB",
			 (unsigned long long)(cfg.ram_bytes >> 30));
		trace_reader_close(tr);
		free(tr);
		free(ev);
		return e;
	}
	r.res = res;
	r.o = o;
	r.stride = SAMPLE_FIRST_STRIDE;
	r.next_sample = r.stride;
	r.keep_every = 1;
	r.khug_next_ns = UINT64_MAX;
	r.grid_next_ns = o->sample_every_ms ? o->sample_every_ms * 1000000ULL : UINT64_MAX;
	timer_update(&r);
	r.t_start = r.t_progress = wall();
	series_add(&res->overall, 0, UINT64_MAX, 0, 0);
	ret = apply_knobs(&r, &tr->header, err, errlen);
	if (ret)
		goto out;
	khugepaged_settings(&r, &tr->header);

	while ((e = trace_next(tr, ev)) > 0) {
		if (__builtin_expect(ev->time_ns > r.timer_ns, 0))
			timers_run(&r, ev->time_ns);
		if (ev->type == TR_FAULT) {
			if (__builtin_expect(ev->pid != r.cur_pid, 0)) {
				struct task *t = task_find(&r, ev->pid, 0);

				r.cur_pid = ev->pid;
				r.cur = t ? t->mm : NULL;
			}
			do_fault(&r, ev);
			if (r.cur && tr->nrecords < r.next_sample) {
				/* the faults that follow, page by page, join the
				 * run as do_fault would have added them */
				uint64_t room = r.next_sample - tr->nrecords, k;

				if (room > RUN_MAX - r.run.n)
					room = RUN_MAX - r.run.n;
				k = trace_next_seq(tr, ev->write, room);
				r.run.n += k;
				r.cur->faults += k;
			}
			if (__builtin_expect(tr->nrecords >= r.next_sample, 0)) {
				run_flush(&r);
				r.now_ns = ev->time_ns;
				take_sample(&r);
				r.next_sample = tr->nrecords + r.stride;
				khug_check_registered(&r);
				progress(&r, tr);
			}
			continue;
		}
		run_flush(&r);
		r.now_ns = ev->time_ns;
		if (ev->pid != r.cur_pid || !r.cur) {
			struct task *t = task_find(&r, ev->pid, 0);

			r.cur_pid = ev->pid;
			r.cur = t ? t->mm : NULL;
		}
		switch (ev->type) {
		case TR_SYSCALL:
			do_syscall(&r, ev);
			break;
		case TR_FORK:
			do_fork(&r, ev);
			break;
		case TR_EXEC:
			do_exec(&r, ev);
			break;
		case TR_VMA:
			do_vma(&r, ev);
			break;
		case TR_TOUCH:
			if (r.cur)
				set_pending_brk(&r, r.cur);
			do_touch(&r, ev);
			break;
		case TR_EXIT:
			do_exit(&r, ev);
			break;
		case TR_LOST:
			res->lost_events += ev->count;
			break;
		case TR_KFIG:
			do_kfig(&r, ev);
			break;
		case TR_NOTE:
			note(&r, "recorder: %s", ev->name);
			break;
		default:
			break;
		}
		khug_check_registered(&r);
	}
	run_flush(&r);
	if (e < 0) {
		/* cut short (disk full, recorder killed) or damaged: every
		 * complete block before the damage was replayed; the figures
		 * are those of the part read, and say so */
		uint64_t at = trace_reader_offset(tr);

		res->partial = 1;
		res->partial_offset = at;
		res->partial_missing_bytes = r.file_size > at ? r.file_size - at : 0;
		snprintf(res->partial_why, sizeof(res->partial_why), "%s", tr->err);
	}
	res->records = tr->nrecords;
	res->faults = tr->nfaults;
	res->duration_ns = tr->time_ns;
	timers_run(&r, tr->time_ns);
	r.now_ns = tr->time_ns;
	if (o->settle_ms)
		settle(&r, o->settle_ms);
	/* what is still alive at the end of the trace (and the settling) ends there */
	take_sample(&r);
	for (int i = 0; i < res->nmms; i++)
		if (!res->mms[i]->ended) {
			machine_final(&r); /* all of them together */
			r.final_taken = 1;
			break;
		}
	for (int i = 0; i < res->nmms; i++)
		if (!res->mms[i]->ended)
			mm_end(&r, res->mms[i], res->partial ? "trace cut" : "end of trace");
	thps_vmstat(r.m, res->vm);
	for (int order = THPS_MTHP_MIN_ORDER; order <= THPS_MTHP_MAX_ORDER; order++)
		thps_mthp_stats(r.m, order, res->mthp[order]);
	if (res->lost_events)
		note(&r, "the recorder lost %llu events: these figures are too low",
		     (unsigned long long)res->lost_events);
out:
	res->seconds = wall() - r.t_start;
	thps_machine_free(r.m);
	pidtab_free(&r.tasks);
	trace_reader_close(tr);
	free(tr);
	free(ev);
	return ret;
}

void replay_result_free(struct replay_result *res)
{
	for (int i = 0; i < res->nmms; i++) {
		free(res->mms[i]->series.p);
		free(res->mms[i]->foreign);
		free(res->mms[i]->cow);
		free(res->mms[i]);
	}
	free(res->mms);
	free(res->overall.p);
	memset(res, 0, sizeof(*res));
}
