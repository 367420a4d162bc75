/*
 * replay.c - a recorded trace through the model (replay.h): the engine.
 *
 * The loop reads one record at a time (no allocation per record) and keeps
 * the current process's address space at hand, so that a fault, the common
 * record, costs a table-free dispatch and joins a run of faults that is
 * made as one thps_touch (records.c, which makes every kind of record).
 * What is reported is computed by the measures (measure.h), which the
 * engine calls when an address space begins and ends, at each sample (one
 * every "stride" records, and at each point of the trace's clock below),
 * at the end of the trace and when the run is done.
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

#include "measure.h"

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

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void replay_note(struct replay *r, const char *fmt, ...)
{
	va_list ap;

	if (r->res->nnotes >= (int)(sizeof(r->res->notes) / sizeof(r->res->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->res->notes[r->res->nnotes++], sizeof(r->res->notes[0]), fmt, ap);
	va_end(ap);
}

/* ---- the tasks, by pid (util/pidtab.h) ---- */
struct task *replay_task(struct replay *r, int32_t pid, int create)
{
	return pidtab_find(&r->tasks, pid, create ? &(int){ 0 } : NULL);
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
struct replay_mm *replay_mm_new(struct replay *r, int pid, const char *name, thps_proc *proc)
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
	measures_mm_begin(r, mm);
	return mm;
}

void replay_mm_end(struct replay *r, struct replay_mm *mm, const char *why)
{
	if (mm->ended)
		return;
	measures_mm_end(r, mm);
	thps_exit(mm->proc);
	mm->proc = NULL;
	mm->ended = 1;
	mm->end = why;
	mm->end_ns = r->now_ns;
	if (r->cur == mm)
		r->cur = NULL;
}

void replay_mm_put(struct replay *r, struct replay_mm *mm, const char *why)
{
	if (mm && --mm->users == 0)
		replay_mm_end(r, mm, why);
}

/*
 * The OOM killer chose some processes (memory.events oom_kill moved): end
 * each with "OOM kill", keep its pid as killed so that its later records
 * (and a child's) are skipped as such, and say when in the trace it died.
 */
void replay_oom_check(struct replay *r)
{
	uint64_t kills = thps_memcg_event(r->m, THPS_MEMCG_oom_kill);

	if (kills == r->oom_kills_seen)
		return;
	r->oom_kills_seen = kills;
	for (size_t i = 0; i < r->tasks.cap; i++) {
		struct task *t = pidtab_slot(&r->tasks, i);
		struct replay_mm *mm = t ? t->mm : NULL;

		if (!mm || !mm->proc || !thps_proc_oom_killed(mm->proc))
			continue;
		mm->oom_killed = 1;
		mm->oom_kill_ns = r->now_ns;
		mm->oom_kill_record = r->kill_record && mm == r->run.mm ? r->kill_record
					: r->nrecords ? *r->nrecords : 0;
		r->res->oom_kills++;
		/* every task of it dies with it (vfork shares it) */
		replay_mm_end(r, mm, "OOM kill");
	}
	r->kill_record = 0;
	for (size_t i = 0; i < r->tasks.cap; i++) {
		struct task *t = pidtab_slot(&r->tasks, i);

		if (t && t->mm && t->mm->oom_killed) {
			t->mm = NULL;
			t->oom_killed = 1;
			if (t->pid == r->cur_pid)
				r->cur_killed = 1;
		}
	}
}

void replay_take_sample(struct replay *r)
{
	measures_tick(r, r->sample_idx++);
}

/* ---- the trace's clock: khugepaged and --sample-ms ---- */
static void timer_update(struct replay *r)
{
	r->timer_ns = r->khug_next_ns < r->grid_next_ns ? r->khug_next_ns : r->grid_next_ns;
}

/* After a record that may have registered an mm: a khugepaged with
 * nothing to do wakes now (__khugepaged_enter's wake_up_interruptible);
 * with a phase (--khugepaged-phase, ranges.c), one busy with others'
 * mms is that far into its sleep and wakes when the sleep ends. */
static void khug_check_registered(struct replay *r)
{
	struct thps_khugepaged_stats k;

	if (r->o->no_khugepaged || r->khug_next_ns != UINT64_MAX)
		return;
	thps_khugepaged_stats(r->m, &k);
	if (k.mm_slots) {
		if (!r->res->khugepaged_registered) {
			r->res->khugepaged_registered = 1;
			r->res->khugepaged_registered_ns = r->now_ns;
		}
		r->khug_next_ns = r->now_ns + r->o->khugepaged_phase_ms * 1000000ULL;
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
		replay_take_sample(r);
	if (!k.mm_slots)
		r->khug_next_ns = UINT64_MAX; /* the last one left while it scanned */
}

/* Everything due before time t (ns of the trace), in time order; the
 * faults gathered so far come first. */
static void timers_run(struct replay *r, uint64_t t)
{
	replay_run_flush(r);
	while (r->timer_ns < t) {
		if (r->khug_next_ns <= r->grid_next_ns) {
			khug_wake(r);
		} else {
			r->now_ns = r->grid_next_ns;
			measures_tick(r, UINT64_MAX); /* never thinned */
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
		replay_note(r, "--settle: no process alive at the end of the trace is registered with "
			"khugepaged (none left, or none with an eligible VMA): nothing changes");
	else
		replay_note(r, "--settle: khugepaged ran %llu simulated ms (%llu wake-ups) after the last "
		     "record and collapsed %llu ranges", (unsigned long long)settle_ms,
		     (unsigned long long)(k.wakeups - k0.wakeups),
		     (unsigned long long)(k.pages_collapsed - k0.pages_collapsed));
}

/* ---- the run ---- */

/* The trace opened and a machine made for it; the result's header. */
static int replay_open(struct replay *r, const char *path, struct trace_reader *tr,
		       char *err, size_t errlen)
{
	struct thps_config cfg = { .ram_bytes = r->o->ram_bytes ? r->o->ram_bytes : 64ULL << 30 };
	struct stat st;
	const char *v;
	int e;

	e = trace_reader_open(tr, path);
	if (e) {
		snprintf(err, errlen, "%s", tr->err);
		return e;
	}
	if ((v = trace_header_get(&tr->header, "command")))
		snprintf(r->res->command, sizeof(r->res->command), "%s", v);
	if ((v = trace_header_get(&tr->header, "kernel")))
		snprintf(r->res->kernel, sizeof(r->res->kernel), "%s", v);
	if ((v = trace_header_get(&tr->header, "access")))
		snprintf(r->res->access.source, sizeof(r->res->access.source), "%s", v);
	r->file_size = stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
	if (r->o->nfree_blocks) {
		/* room for every block beside a reserved buddy, and 4 MiB */
		uint64_t frames = 2048;

		for (int k = 0; k < r->o->nfree_blocks; k++)
			frames += r->o->free_blocks[k] << (k + (k < 10));
		cfg.ram_bytes = frames << 12;
	}
	e = thps_machine_new(&cfg, &r->m);
	if (!e) /* a full machine OOM-kills, as Linux does (--ram) */
		thps_set_global_oom(r->m, 1);
	if (!e && r->o->nfree_blocks &&
	    (e = thps_shape_free(r->m, r->o->free_blocks, r->o->nfree_blocks))) {
		snprintf(err, errlen, "--free-blocks: %s", strerror(-e));
		thps_machine_free(r->m);
		r->m = NULL;
		trace_reader_close(tr);
		return e;
	}
	if (e) {
		snprintf(err, errlen, "cannot create a simulated machine of %llu GiB",
			 (unsigned long long)(cfg.ram_bytes >> 30));
		trace_reader_close(tr);
		return e;
	}
	r->stride = SAMPLE_FIRST_STRIDE;
	r->next_sample = r->stride;
	r->keep_every = 1;
	r->khug_next_ns = UINT64_MAX;
	r->grid_next_ns = r->o->sample_every_ms ? r->o->sample_every_ms * 1000000ULL : UINT64_MAX;
	timer_update(r);
	r->t_start = r->t_progress = wall();
	return 0;
}

/* The process a record is of: the current one, found again when the
 * pid changed or it had none. */
static void select_task(struct replay *r, int32_t pid)
{
	struct task *t = replay_task(r, pid, 0);

	r->cur_pid = pid;
	r->cur = t ? t->mm : NULL;
	r->cur_killed = t && t->oom_killed;
}

/* A fault record, and the faults that follow it page by page up to the
 * next sample, gathered as one run; a sample when it is due. */
static inline void replay_faults(struct replay *r, struct trace_reader *tr, struct trace_event *ev)
{
	uint64_t limit = UINT64_MAX, rec = ev->addr;

	if (__builtin_expect(ev->pid != r->cur_pid, 0))
		select_task(r, ev->pid);
	if (__builtin_expect(r->layout.on, 0) && r->cur && r->cur->xlat) {
		ev->addr += (uint64_t)xlat_at(r->cur->xlat, rec, &limit);
		if (r->layout.probe)
			layout_probe(r, rec);
	}
	replay_fault(r, ev);
	if (r->cur && tr->nrecords < r->next_sample) {
		/* the faults that follow join the run as replay_fault would
		 * have added them (and, under another layout, while they keep
		 * the first one's shift) */
		uint64_t room = r->next_sample - tr->nrecords, k;

		if (room > RUN_MAX - r->run.n)
			room = RUN_MAX - r->run.n;
		if (__builtin_expect(limit != UINT64_MAX, 0) && room > (limit - rec) / 4096 - 1)
			room = (limit - rec) / 4096 - 1;
		k = trace_next_seq(tr, ev->write, room);
		r->run.n += k;
		r->cur->faults += k;
	}
	if (__builtin_expect(tr->nrecords >= r->next_sample, 0)) {
		replay_run_flush(r);
		r->now_ns = ev->time_ns;
		replay_take_sample(r);
		r->next_sample = tr->nrecords + r->stride;
		khug_check_registered(r);
		progress(r, tr);
	}
}

/* Any other record. */
static void replay_record(struct replay *r, struct trace_event *ev)
{
	replay_run_flush(r);
	r->now_ns = ev->time_ns;
	if (ev->pid != r->cur_pid || !r->cur)
		select_task(r, ev->pid);
	switch (ev->type) {
	case TR_SYSCALL:
		if (r->layout.on)
			layout_syscall(r, ev);
		else
			replay_syscall(r, ev);
		if (ev->pid == r->caller_pid)
			r->caller = NULL; /* it was this call's */
		break;
	case TR_ACCESS:
		replay_run_flush(r);
		measures_access(r, r->cur, ev);
		break;
	case TR_CALLER:
		r->caller = replay_intern_caller(r->res, ev->name);
		r->caller_pid = ev->pid;
		break;
	case TR_FORK:
		replay_fork(r, ev);
		break;
	case TR_EXEC:
		replay_exec(r, ev);
		break;
	case TR_VMA:
		replay_vma(r, ev);
		break;
	case TR_TOUCH:
		if (r->cur)
			replay_set_pending_brk(r, r->cur);
		if (r->layout.on)
			layout_touch(r, ev);
		else
			replay_touch(r, ev);
		break;
	case TR_EXIT:
		replay_exit(r, ev);
		break;
	case TR_LOST:
		r->res->lost_events += ev->count;
		break;
	case TR_KFIG:
		replay_kfig(r, ev);
		break;
	case TR_NOTE:
		replay_note(r, "recorder: %s", ev->name);
		break;
	default:
		break;
	}
	khug_check_registered(r);
	replay_oom_check(r);
}

/* After the last record (e < 0: the trace is cut short or damaged there):
 * the clock runs to the end of the trace and --settle, what is still
 * alive ends, and the measures finish. */
static void replay_end(struct replay *r, struct trace_reader *tr, int e)
{
	struct replay_result *res = r->res;

	replay_run_flush(r);
	if (e < 0) {
		/* every complete block before the damage was replayed; the
		 * figures are those of the part read, and say so */
		uint64_t at = trace_reader_offset(tr);

		res->partial = 1;
		res->partial_offset = at;
		res->partial_missing_bytes = r->file_size > at ? r->file_size - at : 0;
		snprintf(res->partial_why, sizeof(res->partial_why), "%s", tr->err);
	}
	res->records = tr->nrecords;
	res->faults = tr->nfaults;
	res->layout_sensitive = r->layout.probe ? r->layout.sensitive : -1;
	res->duration_ns = tr->time_ns;
	timers_run(r, tr->time_ns);
	r->now_ns = tr->time_ns;
	if (r->o->settle_ms)
		settle(r, r->o->settle_ms);
	replay_take_sample(r);
	measures_trace_end(r);
	thps_memcg_read(r->m, &res->memcg); /* memory.current at the end of the trace */
	for (int i = 0; i < res->nmms; i++)
		if (!res->mms[i]->ended)
			replay_mm_end(r, res->mms[i], res->partial ? "trace cut" : "end of trace");
	measures_finish(r);
	if (res->lost_events)
		replay_note(r, "the recorder lost %llu events: these figures are too low",
			    (unsigned long long)res->lost_events);
}

int replay_run(const char *path, const struct replay_opts *o, struct replay_result *res,
	       char *err, size_t errlen)
{
	struct trace_reader *tr = malloc(sizeof(*tr));
	struct trace_event *ev = malloc(sizeof(*ev));
	struct replay r = { .tasks = PIDTAB_INIT(struct task, 64), .res = res, .o = o };
	int e, ret;

	memset(res, 0, sizeof(*res));
	if (!tr || !ev) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out_free;
	}
	ret = replay_open(&r, path, tr, err, errlen);
	if (ret)
		goto out_free;
	measures_begin(&r);
	ret = replay_apply_knobs(&r, &tr->header, err, errlen);
	if (ret)
		goto out;
	replay_khugepaged_settings(&r, &tr->header);
	replay_apply_limits(&r, &tr->header);
	r.nrecords = &tr->nrecords;
	layout_begin(&r, o->layout_seed, o->layout);
	while ((e = trace_next(tr, ev)) > 0) {
		if (__builtin_expect(ev->time_ns > r.timer_ns, 0))
			timers_run(&r, ev->time_ns);
		if (ev->type == TR_FAULT)
			replay_faults(&r, tr, ev);
		else
			replay_record(&r, ev);
	}
	replay_end(&r, tr, e);
out:
	res->seconds = wall() - r.t_start;
	thps_machine_free(r.m);
	pidtab_free(&r.tasks);
	trace_reader_close(tr);
out_free:
	free(tr);
	free(ev);
	return ret;
}

/*
 * A CALLER record's chain, kept once per distinct text for the whole
 * result (a program makes most of its mappings from a few places): the
 * mappings point into it.  NULL when out of memory: the mapping is then
 * reported without its caller.
 */
const char *replay_intern_caller(struct replay_result *res, const char *chain)
{
	char *s;

	for (int i = res->ncallers - 1; i >= 0; i--)
		if (!strcmp(res->callers[i], chain))
			return res->callers[i];
	if (res->ncallers == res->capcallers) {
		int cap = res->capcallers ? res->capcallers * 2 : 16;
		char **v = realloc(res->callers, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		res->callers = v;
		res->capcallers = cap;
	}
	s = strdup(chain);
	if (s)
		res->callers[res->ncallers++] = s;
	return s;
}

/* The chain of the SYSCALL being replayed, when a CALLER record gave it. */
const char *replay_caller(const struct replay *r)
{
	return r->caller && r->caller_pid == r->cur_pid ? r->caller : NULL;
}

void replay_result_free(struct replay_result *res)
{
	for (int i = 0; i < res->nmms; i++) {
		measures_mm_free(res->mms[i]);
		xlat_free(res->mms[i]->xlat);
		free(res->mms[i]->foreign);
		free(res->mms[i]->cow);
		free(res->mms[i]->final_file_cow);
		free(res->mms[i]);
	}
	free(res->mms);
	for (int i = 0; i < res->ncallers; i++)
		free(res->callers[i]);
	free(res->callers);
	replay_ranges_free(res->ranges);
	measures_res_free(res);
	memset(res, 0, sizeof(*res));
}
