/*
 * record.c - "thpsim record": run an unmodified program and write a trace of
 * what it does to its anonymous memory.
 *
 * How (docs/trace-format.md has the trace; this is the method):
 *
 *  - The program starts with prctl(PR_SET_THP_DISABLE), which it and its
 *    children keep across fork and exec.  Without THP, the first read of a
 *    page maps the 4 KiB zero page (one fault) and the first write maps a
 *    page of its own (one fault): every first read and first write is one
 *    page fault, which the tracepoints exceptions:page_fault_user and
 *    page_fault_kernel report with the address and the error code (bit 1:
 *    a write).  Faults the kernel takes itself, writing into a fresh buffer
 *    in read(2) for instance, are page_fault_kernel.
 *  - System calls that shape memory come from raw_syscalls:sys_enter and
 *    sys_exit, filtered in the kernel by number, and are written when they
 *    return, with their arguments and result.  Calls that fill memory
 *    without faults (MAP_POPULATE, MAP_LOCKED, MADV_POPULATE_*, mlock,
 *    mlockall) also get a TOUCH record.
 *  - task:task_newtask gives every fork, vfork and clone with its flags (a
 *    thread shares its parent's process; CLONE_VM without CLONE_THREAD
 *    shares the address space until exec), sched:sched_process_exit the
 *    death of a whole thread group.
 *  - The program runs under ptrace (PTRACE_SEIZE, following forks, clones
 *    and execs) so that it can be stopped at the two moments /proc must be
 *    read while nothing moves: right after each exec, for the address space
 *    the kernel built (the stack, the bss, the break), and right before
 *    each process exits, for the figures the kernel reports (the reference
 *    for validation).  At each stop the ring buffer is drained first, so
 *    the snapshot lands in the trace exactly where it belongs.  Signals are
 *    passed on unchanged; job-control stops are kept (PTRACE_LISTEN).
 *
 * With --access, DAMON samples which pages the program's first process
 * accesses (damon.c): set up before the program runs, so that the header
 * says whether it is on, started at the process's first exec stop, asked
 * for a sample from the loop once half an aggregation interval has passed
 * since the last (the request waits for the end of the interval in
 * progress, so every interval is one sample), and once more at the
 * process's exit stop.
 *
 * Lost events (the ring buffer overflowed) become LOST records and a
 * warning; the program's output, input and exit status pass through.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "trace/linux_abi.h"
#include "util/json.h"
#include "util/kprofile.h"
#include "util/outfile.h"
#include "util/pidtab.h"
#include "util/sysfile.h"

#define TIME_STEP_NS 100000 /* TIME records at most every 100 us */


/* x86-64 system calls, with the number of arguments kept: -1 for those
 * not traced. */
static const struct {
	int nr, nargs;
} linux_syscalls[] = {
#define SYSCALL_ROW(name, number, nargs) { number, nargs },
	LINUX_SYSCALLS(SYSCALL_ROW)
#undef SYSCALL_ROW
};
#define NR_SYSCALLS ((int)(sizeof(linux_syscalls) / sizeof(linux_syscalls[0])))

/* ---- per thread and per process state, by tid or pid (util/pidtab.h) ---- */
struct slot {
	int32_t key; /* the pid table's key */
	int nr;
	uint64_t args[TRACE_SYSCALL_ARGS];
	int exec_pending, mcl_future;
	int64_t exit_status;
	struct rec_sample chain; /* --callers: the call's chain (raw: NULL) */
};

static struct slot *table_find(struct pidtab *t, int32_t key, int create)
{
	int fresh = 0;
	struct slot *s = pidtab_find(t, key, create ? &fresh : NULL);

	if (fresh)
		s->exit_status = -1;
	return s;
}

/* ---- the recorder ---- */

/* A decoded event waiting in the reorder queue. */
enum { QEV_LOST = NR_REC_EVENTS, QEV_THROTTLE };
struct qev {
	uint64_t t, seq;
	int32_t pid, tid;
	int type;          /* enum rec_event, QEV_LOST, QEV_THROTTLE */
	uint64_t a[7];
	struct rec_sample *chain; /* --callers, EV_SYS_ENTER: owned, or NULL */
};

/* Events newer than this are kept back a round: one CPU's event may still
 * be in flight while a later one of the same task shows on another CPU. */
#define REORDER_MARGIN_NS 20000000ULL

struct recorder {
	struct trace_writer w;
	struct rec_perf pp;
	struct pidtab syscalls; /* by tid: the call in progress */
	struct pidtab procs;    /* by pid: per-process state */
	struct pidtab ended;    /* by pid: exits written when reaped (below) */
	uint64_t t0_ns;
	uint64_t samples, faults, kernel_faults, syscalls_written, forks, execs, exits;
	uint64_t exits_at_reap; /* of exits: no sched_process_exit came for them */
	uint64_t lost, lost_records, throttled, dropped_exec, dropped_high;
	int nargs[512];
	struct qev *q;        /* the reorder queue */
	size_t nq, capq;
	uint64_t seq;
	struct rec_symbols *sym; /* --callers */
	uint64_t callers;     /* CALLER records written */
	uint64_t access_regions; /* ACCESS region records written */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Touches for calls that fill memory without faults. */
static void write_populate(struct recorder *rc, int32_t pid, int nr, const uint64_t *a, int64_t ret)
{
	struct slot *ps;

	switch (nr) {
	case LINUX_NR_mmap: /* MAP_POPULATE or MAP_LOCKED (or mlockall(MCL_FUTURE)), not MAP_NONBLOCK */
		if (ret < 0 && ret > -4096)
			return;
		ps = table_find(&rc->procs, pid, 0);
		if (((a[3] & LINUX_MAP_POPULATE) || (a[3] & LINUX_MAP_LOCKED) ||
		     (ps && ps->mcl_future)) &&
		    !(a[3] & LINUX_MAP_NONBLOCK))
			trace_write_touch(&rc->w, (uint64_t)ret, a[1], TRACE_TOUCH_POPULATE);
		break;
	case LINUX_NR_madvise: /* MADV_POPULATE_READ and _WRITE */
		if (ret == 0 && (a[2] == LINUX_MADV_POPULATE_READ || a[2] == LINUX_MADV_POPULATE_WRITE))
			trace_write_touch(&rc->w, a[0], a[1],
					  a[2] == LINUX_MADV_POPULATE_READ ? TRACE_TOUCH_READ
									   : TRACE_TOUCH_WRITE);
		break;
	case LINUX_NR_mlock:
		if (ret == 0)
			trace_write_touch(&rc->w, a[0], a[1], TRACE_TOUCH_POPULATE);
		break;
	case LINUX_NR_mlock2: /* unless MLOCK_ONFAULT */
		if (ret == 0 && !(a[2] & LINUX_MLOCK_ONFAULT))
			trace_write_touch(&rc->w, a[0], a[1], TRACE_TOUCH_POPULATE);
		break;
	case LINUX_NR_mlockall: /* MCL_CURRENT populates now, MCL_FUTURE later */
		if (ret != 0 || (a[0] & LINUX_MCL_ONFAULT))
			return;
		if (a[0] & LINUX_MCL_CURRENT)
			trace_write_touch(&rc->w, 0, LINUX_TASK_SIZE, TRACE_TOUCH_POPULATE);
		if ((a[0] & LINUX_MCL_FUTURE) && (ps = table_find(&rc->procs, pid, 1)))
			ps->mcl_future = 1;
		break;
	case LINUX_NR_munlockall:
		if (ret == 0 && (ps = table_find(&rc->procs, pid, 0)))
			ps->mcl_future = 0;
		break;
	}
}

/* --callers: the chain of a call that makes a mapping, before its SYSCALL. */
static void write_caller(struct recorder *rc, int32_t pid, int nr, const struct slot *s)
{
	char text[TRACE_NAME_MAX];

	if (!rc->sym || !s->chain.nchain ||
	    (nr != LINUX_NR_mmap && nr != LINUX_NR_brk && nr != LINUX_NR_mremap))
		return;
	if (rec_symbols_chain(rc->sym, pid, &s->chain, text, sizeof(text))) {
		trace_write_caller(&rc->w, text);
		rc->callers++;
	}
}

/* Write one event, in time order, to the trace. */
static void emit(struct recorder *rc, const struct qev *e)
{
	int32_t pid = e->pid, tid = e->tid;
	struct slot *s;

	rc->samples++;
	if (e->t > rc->t0_ns)
		trace_write_time(&rc->w, e->t - rc->t0_ns, TIME_STEP_NS);
	switch (e->type) {
	case EV_FAULT_USER:
	case EV_FAULT_KERNEL:
		if (e->a[0] >= LINUX_TASK_SIZE) {
			rc->dropped_high++;
			return;
		}
		s = table_find(&rc->procs, pid, 0);
		if (s && s->exec_pending) {
			rc->dropped_exec++; /* in the exec snapshot that follows */
			return;
		}
		trace_write_proc(&rc->w, pid);
		trace_write_fault(&rc->w, e->a[0], (e->a[1] & 2) != 0, e->type == EV_FAULT_KERNEL);
		rc->faults++;
		rc->kernel_faults += e->type == EV_FAULT_KERNEL;
		return;
	case EV_SYS_ENTER: {
		int64_t nr = (int64_t)e->a[0];

		if (nr < 0 || nr >= 512 || !rc->nargs[nr] || !(s = table_find(&rc->syscalls, tid, 1)))
			return;
		s->nr = (int)nr;
		memcpy(s->args, e->a + 1, sizeof(s->args));
		s->chain.nchain = 0;
		if (e->chain)
			s->chain = *e->chain;
		/* the faults of an exec (the loader's, the stack's) are in its
		 * snapshot; a failed execve ends this at its exit */
		if ((nr == LINUX_NR_execve || nr == LINUX_NR_execveat) && (s = table_find(&rc->procs, pid, 1)))
			s->exec_pending = 1;
		return;
	}
	case EV_SYS_EXIT: {
		int64_t nr = (int64_t)e->a[0], ret = (int64_t)e->a[1];
		uint64_t args[TRACE_SYSCALL_ARGS];

		s = table_find(&rc->syscalls, tid, 0);
		if (!s || s->nr != nr)
			return; /* entered before recording began (the first execve) */
		memcpy(args, s->args, sizeof(args));
		trace_write_proc(&rc->w, pid);
		write_caller(rc, pid, (int)nr, s);
		pidtab_del(&rc->syscalls, tid);
		if ((nr == LINUX_NR_execve || nr == LINUX_NR_execveat) && ret < 0 && (s = table_find(&rc->procs, pid, 0)))
			s->exec_pending = 0;
		trace_write_syscall(&rc->w, (int)nr, rc->nargs[nr] - 1, args, ret);
		write_populate(rc, pid, (int)nr, args, ret);
		rc->syscalls_written++;
		return;
	}
	case EV_NEWTASK:
		pidtab_del(&rc->ended, (int32_t)e->a[0]); /* a pid used again */
		trace_write_proc(&rc->w, pid);
		trace_write_fork(&rc->w, (int32_t)e->a[0], e->a[1]);
		rc->forks++;
		return;
	case EV_EXEC:
		if ((s = table_find(&rc->procs, pid, 1)))
			s->exec_pending = 1;
		rec_symbols_forget(rc->sym, pid);
		return;
	case EV_EXIT:
		pidtab_del(&rc->syscalls, tid);
		if (!e->a[0])
			return; /* a thread; the process goes on */
		if (table_find(&rc->ended, pid, 0)) {
			pidtab_del(&rc->ended, pid); /* late: written when reaped */
			return;
		}
		s = table_find(&rc->procs, pid, 0);
		trace_write_proc(&rc->w, pid);
		trace_write_exit(&rc->w, s ? s->exit_status : -1);
		pidtab_del(&rc->procs, pid);
		rec_symbols_forget(rc->sym, pid);
		rc->exits++;
		return;
	case QEV_LOST:
		rc->lost += e->a[0];
		rc->lost_records++;
		trace_write_lost(&rc->w, e->a[0]);
		return;
	case QEV_THROTTLE:
		rc->throttled++;
		trace_write_note(&rc->w, "the kernel throttled a tracepoint: events may be missing");
		return;
	}
}

static struct qev *queue_add(struct recorder *rc)
{
	if (rc->nq == rc->capq) {
		size_t cap = rc->capq ? rc->capq * 2 : 4096;
		struct qev *q = realloc(rc->q, cap * sizeof(*q));

		if (!q)
			return NULL;
		rc->q = q;
		rc->capq = cap;
	}
	rc->q[rc->nq].seq = rc->seq++;
	return &rc->q[rc->nq++];
}

/* Decode a sample's raw tracepoint record into the queue. */
static struct qev *on_sample(struct recorder *rc, int32_t pid, int32_t tid, uint64_t t,
			     const uint8_t *raw, uint32_t size)
{
	const struct rec_fields *f = &rc->pp.f;
	int type = raw[0] | raw[1] << 8, ev;
	struct qev *e;

	for (ev = 0; ev < NR_REC_EVENTS && f->id[ev] != type; ev++)
		;
	if (ev == NR_REC_EVENTS || !(e = queue_add(rc)))
		return NULL;
	e->chain = NULL;
	e->t = t;
	e->pid = pid;
	e->tid = tid;
	e->type = ev;
	switch (ev) {
	case EV_FAULT_USER:
	case EV_FAULT_KERNEL:
		e->a[0] = rec_rd64(raw + f->fault_address);
		e->a[1] = rec_rd64(raw + f->fault_error_code);
		break;
	case EV_SYS_ENTER:
		e->a[0] = rec_rd64(raw + f->enter_id);
		memcpy(e->a + 1, raw + f->enter_args, 6 * sizeof(uint64_t));
		break;
	case EV_SYS_EXIT:
		e->a[0] = rec_rd64(raw + f->exit_id);
		e->a[1] = rec_rd64(raw + f->exit_ret);
		break;
	case EV_NEWTASK:
		e->a[0] = rec_rd32(raw + f->newtask_pid);
		e->a[1] = rec_rd64(raw + f->newtask_flags);
		break;
	case EV_EXIT:
		e->a[0] = f->exit_group_dead >= 0 && (uint32_t)f->exit_group_dead < size
				  ? raw[f->exit_group_dead] != 0
				  : tid == pid;
		break;
	default:
		break;
	}
	return e;
}

static void on_record(void *arg, int cpu, const void *rec, size_t len)
{
	struct recorder *rc = arg;
	const struct perf_event_header *h = rec;
	const uint8_t *p = (const uint8_t *)rec + sizeof(*h);
	struct qev *e;

	(void)cpu;
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		/* PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_RAW (callers.c) */
		struct rec_sample s;

		if (len < sizeof(*h) || rec_parse_sample(&rc->pp, p, len - sizeof(*h), &s))
			return;
		e = on_sample(rc, s.pid, s.tid, s.t, s.raw, s.raw_size);
		if (e && s.nchain && e->type == EV_SYS_ENTER && (e->chain = malloc(sizeof(s)))) {
			s.raw = NULL;
			*e->chain = s;
		}
		return;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_THROTTLE:
		/* LOST: id, lost, sample_id; THROTTLE: time, id, stream_id, sample_id */
		if (!(e = queue_add(rc)))
			return;
		e->type = h->type == PERF_RECORD_LOST ? QEV_LOST : QEV_THROTTLE;
		e->a[0] = rec_rd64(p + 8);
		e->t = h->type == PERF_RECORD_LOST && len >= sizeof(*h) + 32 ? rec_rd64(p + 24)
									      : rec_rd64(p);
		e->pid = len >= sizeof(*h) + 24 ? (int32_t)rec_rd32(p + 16) : 0;
		e->tid = e->pid;
		return;
	default:
		return;
	}
}

static int qev_cmp(const void *a, const void *b)
{
	const struct qev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Write, in time order, the queued events up to time limit. */
static void flush_queue(struct recorder *rc, uint64_t limit)
{
	size_t i;

	qsort(rc->q, rc->nq, sizeof(*rc->q), qev_cmp);
	for (i = 0; i < rc->nq && rc->q[i].t <= limit; i++) {
		emit(rc, &rc->q[i]);
		free(rc->q[i].chain);
	}
	memmove(rc->q, rc->q + i, (rc->nq - i) * sizeof(*rc->q));
	rc->nq -= i;
}

/* Read the rings; write what is old enough (everything when all). */
static void drain_all(struct recorder *rc, int all)
{
	uint64_t t = now_ns();

	rec_perf_drain(&rc->pp, on_record, rc);
	flush_queue(rc, all ? UINT64_MAX : t - REORDER_MARGIN_NS);
}

/* ---- the program under ptrace ---- */
static int tgid_of(pid_t tid)
{
	char path[64], line[128];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Tgid:", 5)) {
			tgid = atoi(line + 5);
			break;
		}
	fclose(f);
	return tgid;
}

struct measured {
	int pid;
	char exe[256];
	int n;
	struct trace_kfig k[TRACE_KFIG_MAX];
	struct rec_vma *vmas;   /* smaps at the exit: for attribution by mapping */
	int nvmas;
};

/*
 * smaps_rollup and smaps of a process stopped at its exit, read so that
 * the VMAs are those the figures were taken from: the process runs no
 * more, but khugepaged may still collapse its ranges between two reads
 * (a 6.1 guest saw VMAs summing to 6144 kB AnonHugePages against 0 in
 * the rollup read just before), so the rollup is read again after the
 * VMAs, and all of it again while the two rollups differ (5 tries; the
 * last read stands).
 */
static int same_figures(const struct trace_kfig *a, const struct trace_kfig *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].kb != b[i].kb || strcmp(a[i].name, b[i].name))
			return 0;
	return 1;
}

static void measure_at_exit(pid_t pid, struct measured *m)
{
	struct trace_kfig again[TRACE_KFIG_MAX];

	for (int tries = 0; tries < 5; tries++) {
		int n2;

		m->n = rec_read_smaps_rollup(pid, m->k, TRACE_KFIG_MAX);
		m->nvmas = rec_read_smaps_vmas(pid, &m->vmas);
		if (m->nvmas < 0)
			m->nvmas = 0;
		n2 = rec_read_smaps_rollup(pid, again, TRACE_KFIG_MAX);
		if (n2 == m->n && same_figures(again, m->k, n2))
			return;
		free(m->vmas);
		m->vmas = NULL;
		m->nvmas = 0;
	}
	m->nvmas = rec_read_smaps_vmas(pid, &m->vmas);
	if (m->nvmas < 0)
		m->nvmas = 0;
}

/* --measure --access: a sample of the first process's accessed regions,
 * with the kernel's own figures for them (what backs them under the
 * machine's THP settings). */
struct measured_access {
	uint64_t t_ns;               /* since the program started */
	uint64_t accessed_kb;        /* the regions' size */
	uint64_t regions;
	struct trace_access_end end;
};

struct run {
	pid_t child;
	int measure_only;
	struct recorder *rc;         /* NULL when measuring only */
	struct measured *m;          /* measure only: each process at its exit */
	int nm, cap_m;
	int done, status;
	int forwarded;
	/* --access: DAMON (the session's; set up before the program runs);
	 * measure only: its samples, and why there are none when it stopped */
	struct rec_damon *damon;
	uint64_t t0_ns;
	struct measured_access *acc;
	int nacc, cap_acc;
	char access_stopped[400];
};

/* ---- record --access ---- */

/* Why access sampling stopped (or never started): a NOTE in the trace, or
 * the --measure JSON's "access_stopped". */
static void access_failed(struct run *run, const char *what, const char *why)
{
	if (run->rc) {
		char note[400];

		snprintf(note, sizeof(note), "%s: %s", what, why);
		trace_write_note(&run->rc->w, note);
	} else {
		snprintf(run->access_stopped, sizeof(run->access_stopped), "%s: %s", what, why);
	}
}

/* The first process's exec: DAMON starts monitoring it (once: it follows
 * the process's later execs itself).  Failing, the trace (or the JSON)
 * says why. */
static void access_start(struct run *run, pid_t pid)
{
	struct rec_damon *d = run->damon;
	char why[320];

	if (!d->made || d->running)
		return;
	if (!rec_damon_start(d, pid, why, sizeof(why))) {
		d->last_ns = now_ns();
		return;
	}
	access_failed(run, "access sampling did not start", why);
	fprintf(stderr, "thpsim record: --access: %s\n", why);
	rec_damon_stop(d);
}

/* A sample taken: as ACCESS records after TIME and PROC (the rings
 * drained first so that time stays ordered), or kept for the JSON. */
static void access_keep(struct run *run, struct rec_damon *d)
{
	struct recorder *rc = run->rc;
	struct measured_access *a;

	if (rc) {
		drain_all(rc, 1);
		trace_write_time(&rc->w, d->last_ns - rc->t0_ns, 0);
		trace_write_proc(&rc->w, d->pid);
		rec_damon_write(d, &rc->w);
		rc->access_regions += d->nreg;
		return;
	}
	if (run->nacc == run->cap_acc) {
		int cap = run->cap_acc ? run->cap_acc * 2 : 64;

		if (!(a = realloc(run->acc, (size_t)cap * sizeof(*a))))
			return;
		run->acc = a;
		run->cap_acc = cap;
	}
	a = &run->acc[run->nacc++];
	*a = (struct measured_access){ .t_ns = d->last_ns - run->t0_ns, .regions = d->nreg,
				       .end = d->end };
	for (size_t i = 0; i < d->nreg; i++)
		a->accessed_kb += d->reg[i].len >> 10;
}

/* A sample once half an interval has passed since the last (the request
 * waits for the end of the interval in progress).  at_exit: the last one,
 * at the first process's exit stop. */
static void access_sample(struct run *run, int at_exit)
{
	struct rec_damon *d = run->damon;
	int err, due;

	if (!d->running)
		return;
	due = now_ns() >= d->last_ns + d->aggr_us * 1000 / 2;
	if (at_exit)
		d->running = 0; /* the process is going: no sample after this one */
	if (!due)
		return;
	err = rec_damon_sample(d);
	if (err) {
		if (at_exit)
			return;
		d->running = 0;
		access_failed(run, "access sampling stopped: DAMON gave no sample", strerror(-err));
		return;
	}
	d->last_ns = now_ns();
	access_keep(run, d);
}

static void exe_name(pid_t pid, char *out, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, out, len - 1);
	out[n > 0 ? n : 0] = 0;
}

static void on_exit_stop(struct run *run, pid_t pid)
{
	unsigned long msg = 0;

	if (tgid_of(pid) != pid)
		return; /* a thread: its process goes on, or its leader reports */
	ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg);
	if (run->rc) {
		struct trace_kfig k[TRACE_KFIG_MAX];
		int n;
		struct slot *s = table_find(&run->rc->procs, pid, 1);

		if (s)
			s->exit_status = (int64_t)msg;
		drain_all(run->rc, 1);
		if (pid == run->child)
			access_sample(run, 1);
		n = rec_read_smaps_rollup(pid, k, TRACE_KFIG_MAX);
		/* the time of the exit: a program idle before it (a server
		 * between requests, waiting for khugepaged) leaves no event
		 * whose time would say how long it lived, and the replay runs
		 * khugepaged on the trace's clock */
		trace_write_time(&run->rc->w, now_ns() - run->rc->t0_ns, 0);
		trace_write_proc(&run->rc->w, pid);
		trace_write_kfig(&run->rc->w, n, k);
		return;
	}
	if (run->nm == run->cap_m) {
		int cap = run->cap_m ? run->cap_m * 2 : 16;
		struct measured *m = realloc(run->m, (size_t)cap * sizeof(*m));

		if (!m)
			return;
		run->m = m;
		run->cap_m = cap;
	}
	if (pid == run->child)
		access_sample(run, 1);
	run->m[run->nm].pid = pid;
	exe_name(pid, run->m[run->nm].exe, sizeof(run->m[run->nm].exe));
	measure_at_exit(pid, &run->m[run->nm]);
	run->nm++;
}

/*
 * A process reaped: its end is certain.  Where the kernel delivered no
 * sched:sched_process_exit for it (none came on Linux 6.1 and 6.12 guests,
 * issue of the recorder), its EXIT is written now, after every event
 * already in the ring buffers, which holds all the process did; a late
 * tracepoint sample for it is then dropped (rc->ended).  Only a process
 * seen at its exit stop (a thread-group leader) has a slot here.
 */
static void end_at_reap(struct recorder *rc, pid_t pid)
{
	struct slot *s;

	drain_all(rc, 1);
	s = table_find(&rc->procs, pid, 0);
	if (!s || s->exit_status == -1)
		return; /* written from the tracepoint, or never stopped at exit */
	trace_write_proc(&rc->w, pid);
	trace_write_exit(&rc->w, s->exit_status);
	pidtab_del(&rc->procs, pid);
	table_find(&rc->ended, pid, 1);
	rc->exits++;
	rc->exits_at_reap++;
}

static void on_wait(struct run *run, pid_t pid, int st)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (run->rc)
			end_at_reap(run->rc, pid);
		if (pid == run->child) {
			run->done = 1;
			run->status = st;
		}
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	switch (st >> 16) {
	case PTRACE_EVENT_EXEC:
		if (run->rc) {
			struct slot *s;

			drain_all(run->rc, 1);
			trace_write_proc(&run->rc->w, pid);
			rec_write_exec_snapshot(&run->rc->w, pid);
			if ((s = table_find(&run->rc->procs, pid, 0)))
				s->exec_pending = 0;
			run->rc->execs++;
		}
		if (pid == run->child)
			access_start(run, pid);
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	case PTRACE_EVENT_EXIT:
		on_exit_stop(run, pid);
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	case PTRACE_EVENT_STOP: {
		int sig = WSTOPSIG(st);

		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, pid, 0, 0); /* a job-control stop: stay stopped */
		else
			ptrace(PTRACE_CONT, pid, 0, 0); /* a new child's first stop */
		return;
	}
	case 0: /* a signal for the program: deliver it */
		ptrace(PTRACE_CONT, pid, 0, (void *)(long)WSTOPSIG(st));
		return;
	default: /* fork, vfork, clone, vfork done */
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
}

static void reap(struct run *run)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, __WALL | WNOHANG);

		if (pid <= 0)
			return;
		on_wait(run, pid, st);
	}
}

/* Run the loop until the program's first process has exited. */
static void supervise(struct run *run, int sfd)
{
	while (!run->done) {
		struct pollfd pfd[1 + REC_MAX_CPUS] = { { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		int n = 1;

		reap(run);
		if (run->done)
			break;
		if (run->rc)
			n += rec_perf_pollfds(&run->rc->pp, pfd + 1, REC_MAX_CPUS);
		if (poll(pfd, (nfds_t)n, 50) < 0 && errno != EINTR)
			break;
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP) {
				kill(run->child, (int)si.ssi_signo);
				run->forwarded = (int)si.ssi_signo;
			}
			/* SIGINT and SIGQUIT reach the program from the terminal itself */
		}
		if (run->rc)
			drain_all(run->rc, 1);
		access_sample(run, 0);
	}
}

/* ---- the command ---- */

/* record_run's state from its first step to the program's exit. */
struct session {
	struct record_opts *o;
	size_t ring_mib;        /* o->ring_mib, or 64 */
	struct outfile of;      /* the trace, or the JSON file of --measure */
	struct recorder *rc;    /* NULL when measuring only */
	sigset_t mask, old;     /* the signals the loop reads; the caller's mask */
	int sfd;                /* a signalfd of mask */
	pid_t child;            /* the program's first process */
	struct rec_user user;   /* under sudo: whom the command runs as */
	/* --access: DAMON, and how it samples or why it cannot (the trace's
	 * header "access", the --measure JSON's "access_source") */
	struct rec_damon damon;
	char access[512];
};

/* What the child sends back when it cannot exec the command. */
struct child_error {
	int step;               /* enum rec_child_step */
	int err;                /* an errno */
};

static void recorder_free(struct recorder *rc);

/*
 * The way out of record_run before the program runs: it is killed (kill:
 * it may not be stopped yet) and reaped, the recorder's events closed and
 * its trace abandoned, an existing output file left as it was, and the
 * caller's signal mask restored.  Returns code.
 */
static int record_abandon(struct session *ss, int kill_it, int code)
{
	struct recorder *rc = ss->rc;

	if (kill_it)
		kill(ss->child, SIGKILL);
	waitpid(ss->child, NULL, __WALL);
	if (rc) {
		rec_perf_close(&rc->pp);
		trace_writer_close(&rc->w);
		recorder_free(rc);
	}
	ss->rc = NULL;
	outfile_abort(&ss->of);
	sigprocmask(SIG_SETMASK, &ss->old, NULL);
	return code;
}

static void recorder_free(struct recorder *rc)
{
	for (size_t i = 0; i < rc->nq; i++)
		free(rc->q[i].chain);
	free(rc->q);
	rec_symbols_free(rc->sym);
	pidtab_free(&rc->syscalls);
	pidtab_free(&rc->procs);
	pidtab_free(&rc->ended);
	free(rc);
}

/* A bounded string being built; "full" once something did not fit. */
struct strbuf {
	char *s;
	size_t len, n;
	bool full;
};

static void sb_put(struct strbuf *b, const char *str, size_t l)
{
	if (b->full || b->n + l >= b->len) {
		b->full = true;
		return;
	}
	memcpy(b->s + b->n, str, l);
	b->n += l;
	b->s[b->n] = 0;
}

/* Word w, quoted so that bash reads it back as the same word: as it is
 * when it is plain, else in '...' (each ' written '\''), and in $'...'
 * when it holds control characters, since the header is one line and a
 * newline has to be written \n. */
static void sb_put_word(struct strbuf *b, const char *w)
{
	static const char plain_chars[] = "abcdefghijklmnopqrstuvwxyz"
					  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+%@";
	bool plain = *w != 0, control = false;
	char esc[8];

	for (const unsigned char *c = (const unsigned char *)w; *c; c++) {
		if (!strchr(plain_chars, *c))
			plain = false;
		if (*c < 0x20 || *c == 0x7f)
			control = true;
	}
	if (plain) {
		sb_put(b, w, strlen(w));
		return;
	}
	if (!control) {
		sb_put(b, "'", 1);
		for (const char *c = w; *c; c++) {
			if (*c == '\'')
				sb_put(b, "'\\''", 4);
			else
				sb_put(b, c, 1);
		}
		sb_put(b, "'", 1);
		return;
	}
	sb_put(b, "$'", 2);
	for (const unsigned char *c = (const unsigned char *)w; *c; c++) {
		if (*c == '\n') {
			sb_put(b, "\\n", 2);
		} else if (*c == '\t') {
			sb_put(b, "\\t", 2);
		} else if (*c == '\\' || *c == '\'') {
			esc[0] = '\\';
			esc[1] = (char)*c;
			sb_put(b, esc, 2);
		} else if (*c < 0x20 || *c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", *c);
			sb_put(b, esc, 4);
		} else {
			sb_put(b, (const char *)c, 1);
		}
	}
	sb_put(b, "'", 1);
}

void rec_shell_join(char *out, size_t len, char *const argv[])
{
	static const char cut[] = " ...";
	struct strbuf b = { out, len - (sizeof(cut) - 1), 0, false };

	out[0] = 0;
	for (int i = 0; argv[i]; i++) {
		size_t before = b.n;

		if (i)
			sb_put(&b, " ", 1);
		sb_put_word(&b, argv[i]);
		if (b.full) {
			/* whole words only, and say that the rest is missing */
			memcpy(out + before, cut, sizeof(cut));
			return;
		}
	}
}

static void build_header(struct trace_header *h, char *const *argv, size_t ring_mib,
			 int no_aslr, const char *access)
{
	struct utsname u;
	char cmd[2048], buf[64];
	time_t now = time(NULL);
	struct tm tm;

	memset(h, 0, sizeof(*h));
	uname(&u);
	trace_header_add(h, "kernel", u.release);
	trace_header_add(h, "machine", u.machine);
	rec_shell_join(cmd, sizeof(cmd), argv);
	trace_header_add(h, "command", cmd);
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	trace_header_add(h, "recorded", buf);
	trace_header_add(h, "page_size", "4096");
	snprintf(buf, sizeof(buf), "%zu", ring_mib);
	trace_header_add(h, "ring_buffer_mib", buf);
	trace_header_add(h, "method", "perf tracepoints, PR_SET_THP_DISABLE, ptrace stops at exec "
				      "and exit");
	trace_header_add(h, "aslr", rec_aslr_state(no_aslr));
	if (access)
		trace_header_add(h, "access", access);
	/* the recording kernel's profile, as the thpsim/ knobs replay applies */
	{
		const struct kprofile *p = kprofile_host();

		for (int i = 0; i < p->nitems; i++)
			trace_header_add(h, p->item[i].knob, p->item[i].value);
	}
	rec_read_thp_settings(h);
	rec_read_cgroup_limits(h);
}

/* The recorder itself failed (it could not trace, or could not write the
 * trace): as env(1) and timeout(1), 125, which a program rarely returns. */

/* --measure --access: how the samples were taken (or why not), and each
 * sample's accessed regions with what backed them. */
static void print_measured_access(struct json *j, const struct run *run, const char *how)
{
	json_string(j, "access_source", how);
	if (run->access_stopped[0])
		json_string(j, "access_stopped", run->access_stopped);
	json_begin_array(j, "access");
	for (int i = 0; i < run->nacc; i++) {
		const struct measured_access *a = &run->acc[i];

		json_begin_object(j, NULL);
		json_uint(j, "t_ms", a->t_ns / 1000000);
		json_uint(j, "regions", a->regions);
		json_uint(j, "accessed_kB", a->accessed_kb);
		if (a->end.truth) {
			json_uint(j, "present_kB", a->end.present_kb);
			json_uint(j, "pmd_kB", a->end.pmd_kb);
			json_uint(j, "mthp_kB", a->end.mthp_kb);
		}
		json_end_object(j);
	}
	json_end_array(j);
}

static int print_measured(struct run *run, struct session *ss, int no_aslr)
{
	struct outfile *of = &ss->of;
	FILE *f = of->f ? of->f : stderr;
	char why[8192];
	struct json j;

	json_init(&j, f, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "aslr", rec_aslr_state(no_aslr));
	json_begin_array(&j, "processes");
	for (int i = 0; i < run->nm; i++) {
		json_begin_object(&j, NULL);
		json_int(&j, "pid", run->m[i].pid);
		json_string(&j, "exe", run->m[i].exe);
		for (int k = 0; k < run->m[i].n; k++)
			json_uint(&j, run->m[i].k[k].name, run->m[i].k[k].kb);
		/* the VMAs with anonymous memory, as smaps has them at the exit */
		json_begin_array(&j, "vmas");
		for (int k = 0; k < run->m[i].nvmas; k++) {
			const struct rec_vma *v = &run->m[i].vmas[k];

			json_begin_object(&j, NULL);
			json_uint(&j, "start", v->start);
			json_uint(&j, "end", v->end);
			json_string(&j, "name", v->name);
			json_uint(&j, "Anonymous", v->anon_kb);
			json_uint(&j, "AnonHugePages", v->anon_huge_kb);
			json_end_object(&j);
		}
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	if (ss->o->access)
		print_measured_access(&j, run, ss->access);
	json_end_object(&j);
	fputc('\n', f);
	if (of->f && outfile_commit(of, why, sizeof(why)))
		return msg_error(0, "record: %s", why), RECORD_FAILED;
	return 0;
}

/* The program's exit code; killed by a signal, 128 + the signal, and main()
 * dies by it too. */
static int exit_like(int st, int *sig)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st)) {
		*sig = WTERMSIG(st);
		return 128 + WTERMSIG(st);
	}
	return 1;
}


/* Close the trace and put it in place.  A trace whose writing failed is
 * kept only where no file stood before (its complete blocks are readable,
 * and replay marks its figures partial); an existing file stays as it was.
 * 0, or RECORD_FAILED after one line saying what happened. */
static int finish_trace(struct recorder *rc, struct outfile *of)
{
	char why[8192];
	int err = trace_writer_close(&rc->w), e2;
	struct stat st;

	if (!err)
		err = outfile_commit(of, why, sizeof(why));
	else if (!of->tmp[0] || of->existed) {
		snprintf(why, sizeof(why), "writing %s failed: %s (%s)", of->target, strerror(-err),
			 of->tmp[0] ? "the existing file is untouched" : "the trace is incomplete");
		outfile_abort(of);
	} else {
		uint64_t size = stat(of->tmp, &st) == 0 ? (uint64_t)st.st_size : 0;

		e2 = outfile_keep(of, why, sizeof(why));
		size = stat(of->target, &st) == 0 ? (uint64_t)st.st_size : size;
		if (e2)
			snprintf(why, sizeof(why), "writing %s failed: %s; nothing was kept",
				 of->target, strerror(-err));
		else
			snprintf(why, sizeof(why), "writing %s failed: %s; kept the first %llu "
						   "bytes: replay reads their complete blocks and "
						   "marks its figures partial", of->target,
				 strerror(-err), (unsigned long long)size);
	}
	if (!err)
		return 0;
	msg_error(0, "record: %s", why);
	return RECORD_FAILED;
}

/* Under sudo, unless --as-root: whom the command runs as (child.c).  0, or
 * 2 after a message when SUDO_UID or SUDO_GID is not a number. */
static int find_user(struct session *ss)
{
	char why[512];
	int err;

	if (ss->o->as_root)
		return 0;
	err = rec_user_from_sudo(&ss->user, why, sizeof(why));
	if (!err)
		return 0;
	msg_error(0, "record: %s", why);
	return err == -EINVAL ? 2 : RECORD_FAILED;
}

/* An output file that must not be replaced is a usage error (2); any
 * other failure to open it is the recorder's. */
static int open_failed_status(int err)
{
	return err == -EEXIST || err == -ELOOP || err == -EISDIR ? 2 : RECORD_FAILED;
}

/* --access: DAMON set up before the program runs, so that the header says
 * whether the trace has access samples ("access" in hdr); when it cannot
 * be, why, in the header and on stderr, and the trace is recorded without. */
static void prepare_access(struct rec_damon *d, const struct record_opts *o, char *hdr,
			   size_t len)
{
	uint64_t ms = o->access_ms ? o->access_ms : REC_ACCESS_MS_DEFAULT;
	char why[320];

	if (rec_damon_prepare(d, o->damon_root, ms * 1000, why, sizeof(why))) {
		snprintf(hdr, len, "unavailable: %s", why);
		fprintf(stderr, "thpsim record: --access: %s; %s without access samples\n", why,
			o->measure ? "measuring" : "recording");
		return;
	}
	snprintf(hdr, len, "damon vaddr sample_us=%llu aggr_us=%llu pid=first process",
		 (unsigned long long)d->sample_us, (unsigned long long)d->aggr_us);
}

/*
 * Ready to trace: tracefs found (or mounted), the events' ids read, the
 * header built and the trace open beside o->out.  0, or the exit status
 * after one line saying what failed.
 */
static int recorder_open(struct session *ss)
{
	const struct record_opts *o = ss->o;
	struct trace_header *h = malloc(sizeof(*h));
	struct recorder *rc = calloc(1, sizeof(*rc));
	char why[512];
	int err;

	if (!rc || !h) {
		free(h);
		free(rc);
		msg_error(-ENOMEM, "record");
		return RECORD_FAILED;
	}
	rc->syscalls = rc->procs = rc->ended = (struct pidtab)PIDTAB_INIT(struct slot, 256);
	err = rec_tracing_setup(&rc->pp, why, sizeof(why));
	if (err) {
		msg_error(0, "record: cannot record: %s", why);
		free(h);
		free(rc);
		return RECORD_FAILED;
	}
	if (rc->pp.mounted && !o->quiet)
		fprintf(stderr, "thpsim record: tracefs was not mounted; mounted it on "
				"%s\n", rc->pp.tracefs);
	for (int k = 0; k < NR_SYSCALLS; k++) /* 0: not traced */
		rc->nargs[linux_syscalls[k].nr] = linux_syscalls[k].nargs + 1;
	if (o->callers && !(rc->sym = rec_symbols_new())) {
		msg_error(-ENOMEM, "record");
		free(h);
		free(rc);
		return RECORD_FAILED;
	}
	if (o->access)
		prepare_access(&ss->damon, o, ss->access, sizeof(ss->access));
	build_header(h, o->argv, ss->ring_mib, o->no_aslr, o->access ? ss->access : NULL);
	err = outfile_open(&ss->of, o->out, o->force, why, sizeof(why));
	if (!err) {
		err = trace_writer_open_stream(&rc->w, ss->of.f, o->out, h);
		if (err) {
			outfile_abort(&ss->of);
			snprintf(why, sizeof(why), "cannot write %s: %s", o->out, strerror(-err));
		}
	}
	free(h);
	if (err) {
		msg_error(0, "record: %s", why);
		recorder_free(rc);
		return open_failed_status(err);
	}
	ss->rc = rc;
	return 0;
}

/* --measure: no tracing, but ptrace and the program's /proc files need
 * root; the JSON file open when one was named.  0, or the exit status. */
static int measure_open(struct session *ss)
{
	const struct record_opts *o = ss->o;
	char why[512];
	int err;

	if (geteuid() != 0)
		return msg_error(0, "record: --measure needs root (it follows the program with "
				    "ptrace and reads its /proc files)"), RECORD_FAILED;
	if (o->out && (err = outfile_open(&ss->of, o->out, o->force, why, sizeof(why)))) {
		msg_error(0, "record: %s", why);
		return open_failed_status(err);
	}
	if (o->access)
		prepare_access(&ss->damon, o, ss->access, sizeof(ss->access));
	return 0;
}

/*
 * The child: THP off for what it records, then it waits on go until the
 * recorder follows it, sets up its personality and user (child.c) and
 * execs the command.  What fails sends a struct child_error back through
 * errp (close-on-exec: EOF there means the command runs).
 */
static _Noreturn void exec_program(const struct session *ss, int go, int errp)
{
	char *const *argv = ss->o->argv;
	struct child_error ce = { REC_STEP_EXEC, 0 };
	char c;
	int err;

	sigprocmask(SIG_SETMASK, &ss->old, NULL);
	if (!ss->o->measure)
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	if (read(go, &c, 1) != 1)
		_exit(127);
	err = rec_child_prepare(&ss->user, ss->o->no_aslr, &ce.step);
	if (!err) {
		execvp(argv[0], argv);
		err = -errno;
		ce.step = REC_STEP_EXEC;
	}
	ce.err = -err;
	if (write(errp, &ce, sizeof(ce)) < 0)
		_exit(127);
	_exit(127);
}

/* The exit status for what the child could not do, after one line saying
 * it: 127 or 126 for the command (as a shell), RECORD_FAILED for the
 * set-up the recorder asked of it. */
static int child_failed(const struct session *ss, const struct child_error *ce)
{
	const struct rec_user *u = &ss->user;

	switch (ce->step) {
	case REC_STEP_EXEC:
		msg_error(-ce->err, "record: cannot run %s", ss->o->argv[0]);
		return ce->err == ENOENT ? 127 : 126;
	case REC_STEP_PERSONALITY:
		msg_error(-ce->err, "record: cannot turn address-space randomisation off for %s "
				    "(--no-aslr): %s failed", ss->o->argv[0],
			  rec_child_step_name(ce->step));
		return RECORD_FAILED;
	default:
		msg_error(-ce->err, "record: cannot run %s as %s (uid %u, gid %u: the user sudo "
				    "was run by; --as-root keeps root): %s failed", ss->o->argv[0],
			  u->name, (unsigned)u->uid, (unsigned)u->gid,
			  rec_child_step_name(ce->step));
		return RECORD_FAILED;
	}
}

/*
 * The parent, once forked: the events open on the child, the child seized
 * with ptrace, then let go to its exec.  0 once it runs the command, or the
 * exit status after everything is undone (record_abandon).
 */
static int follow_program(struct session *ss, int go, int errp)
{
	struct recorder *rc = ss->rc;
	struct child_error ce;
	char why[512];
	int err;

	if (rc) {
		int traced[NR_SYSCALLS], ntraced = 0;

		for (int k = 0; k < NR_SYSCALLS; k++)
			if (linux_syscalls[k].nargs >= 0)
				traced[ntraced++] = linux_syscalls[k].nr;
		err = rec_perf_open(&rc->pp, ss->child, traced, ntraced, ss->ring_mib, ss->o->callers, why,
				    sizeof(why));
		if (err) {
			msg_error(0, "record: cannot record: %s", why);
			return record_abandon(ss, 1, RECORD_FAILED);
		}
	}
	if (ptrace(PTRACE_SEIZE, ss->child, 0,
		   (void *)(long)(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
				  PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXIT))) {
		msg_error(-errno, "record: ptrace(PTRACE_SEIZE) of the program failed (is another "
				  "debugger attached, or ptrace forbidden by yama/ptrace_scope?)");
		return record_abandon(ss, 1, RECORD_FAILED);
	}
	ss->sfd = signalfd(-1, &ss->mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (rc) {
		struct slot *s = table_find(&rc->procs, ss->child, 1);

		if (s)
			s->exec_pending = 1; /* its first exec */
		rc->t0_ns = now_ns();
	}
	if (write(go, "g", 1) != 1) {
		msg_error(-errno, "record: starting the program");
		close(ss->sfd);
		close(errp);
		return record_abandon(ss, 1, RECORD_FAILED);
	}
	close(go);
	if (read(errp, &ce, sizeof(ce)) == sizeof(ce)) {
		/* an existing file stays as it was */
		close(ss->sfd);
		close(errp);
		return record_abandon(ss, 0, child_failed(ss, &ce));
	}
	close(errp);
	return 0;
}

/*
 * Start the command in a child the recorder follows, with the signals the
 * loop reads blocked (the caller's mask kept in ss->old).  0 once it runs,
 * or the exit status after one line saying what failed.
 */
static int start_program(struct session *ss)
{
	int go[2], errp[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))
		return outfile_abort(&ss->of), msg_error(-errno, "record: pipe"), RECORD_FAILED;
	sigemptyset(&ss->mask);
	sigaddset(&ss->mask, SIGCHLD);
	sigaddset(&ss->mask, SIGINT);
	sigaddset(&ss->mask, SIGQUIT);
	sigaddset(&ss->mask, SIGTERM);
	sigaddset(&ss->mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &ss->mask, &ss->old);
	fflush(NULL);
	ss->child = fork();
	if (ss->child < 0) {
		int e = errno;

		sigprocmask(SIG_SETMASK, &ss->old, NULL); /* the caller's signals as they were */
		return outfile_abort(&ss->of), msg_error(-e, "record: fork"), RECORD_FAILED;
	}
	if (ss->child == 0) {
		close(go[1]);
		close(errp[0]);
		exec_program(ss, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	return follow_program(ss, go[1], errp[0]);
}

/* What the recording holds, on one line unless quiet or the trace failed,
 * then what it lacks. */
static void print_summary(const struct session *ss, double secs, int failed)
{
	const struct recorder *rc = ss->rc;

	if (!ss->o->quiet && !failed)
		fprintf(stderr,
			"thpsim record: %s: %llu events in %.2f s: %llu faults (%llu in the "
			"kernel), %llu system calls, %llu forks, %llu execs, %llu exits\n",
			ss->o->out, (unsigned long long)rc->samples, secs,
			(unsigned long long)rc->faults, (unsigned long long)rc->kernel_faults,
			(unsigned long long)rc->syscalls_written,
			(unsigned long long)rc->forks, (unsigned long long)rc->execs,
			(unsigned long long)rc->exits);
	if (!ss->o->quiet && !failed && ss->o->access && ss->damon.samples)
		fprintf(stderr, "thpsim record: %llu access samples of %llu ms (DAMON), %llu "
				"accessed regions\n", (unsigned long long)ss->damon.samples,
			(unsigned long long)(ss->damon.aggr_us / 1000),
			(unsigned long long)rc->access_regions);
	if (!ss->o->quiet && rc->exits_at_reap)
		fprintf(stderr,
			"thpsim record: %llu of the exits were written when the process was "
			"reaped: this kernel delivered no sched:sched_process_exit for them\n",
			(unsigned long long)rc->exits_at_reap);
	if (rc->lost)
		fprintf(stderr,
			"thpsim record: WARNING: the kernel dropped %llu events (%llu times "
			"the ring buffer was full): the trace is incomplete and replay will "
			"say so; record again with a larger --buffer (now %llu MiB)\n",
			(unsigned long long)rc->lost, (unsigned long long)rc->lost_records,
			(unsigned long long)ss->ring_mib);
}

/* The program is gone: the last events written, the trace put in place,
 * the recorder freed.  0, or RECORD_FAILED when the trace was not. */
static int finish_recording(struct session *ss)
{
	struct recorder *rc = ss->rc;
	double secs = (double)(now_ns() - rc->t0_ns) * 1e-9;
	int failed;

	drain_all(rc, 1);
	rec_perf_close(&rc->pp);
	if (rc->lost)
		trace_write_note(&rc->w, "events were lost: the trace is incomplete");
	failed = finish_trace(rc, &ss->of);
	print_summary(ss, secs, failed);
	recorder_free(rc);
	ss->rc = NULL;
	return failed;
}

int record_run(struct record_opts *o)
{
	struct session ss = { .o = o, .ring_mib = o->ring_mib ? o->ring_mib : 64, .sfd = -1 };
	struct run run = { 0 };
	int code, failed;

	o->exit_signal = 0;
	code = find_user(&ss);
	if (!code)
		code = o->measure ? measure_open(&ss) : recorder_open(&ss);
	if (!code)
		code = start_program(&ss);
	if (code) {
		if (ss.rc) /* the program did not start */
			recorder_free(ss.rc);
		rec_damon_stop(&ss.damon); /* undone, if set up */
		rec_user_free(&ss.user);
		return code;
	}

	run.child = ss.child;
	run.rc = ss.rc;
	run.measure_only = o->measure;
	run.damon = &ss.damon;
	run.t0_ns = now_ns();
	supervise(&run, ss.sfd);
	close(ss.sfd);
	rec_damon_stop(&ss.damon); /* kept: its samples' count and intervals */

	if (ss.rc) {
		failed = finish_recording(&ss);
	} else {
		failed = print_measured(&run, &ss, o->no_aslr);
		for (int i = 0; i < run.nm; i++)
			free(run.m[i].vmas);
		free(run.m);
		free(run.acc);
	}
	sigprocmask(SIG_SETMASK, &ss.old, NULL);
	rec_user_free(&ss.user);
	code = exit_like(run.status, &o->exit_signal);
	if (failed)
		o->exit_signal = 0; /* the exit status says the recorder failed */
	return failed ? failed : code;
}
