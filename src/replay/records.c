/*
 * records.c - each record of a trace made again in the model (engine.h).
 *
 *  - FAULT: a 1-byte read or write (writing 1: the data a program writes
 *    is not recorded, and a zero-filled page would be dropped by a THP
 *    split where the program's data would not).  Consecutive faults of
 *    one kind on consecutive pages are gathered into a run and made as
 *    one thps_touch.
 *  - EXEC ends the process's previous address space and builds the new
 *    one from the VMA records that follow: anonymous private ones, the
 *    stack (MAP_GROWSDOWN, RLIMIT_STACK as recorded) and the heap (then
 *    the break with thps_brk_init) in the model, the rest as foreign
 *    ranges.  Pages the kernel wrote during exec come as TOUCH records.
 *  - FORK: a thread changes nothing; CLONE_VM without CLONE_THREAD (vfork,
 *    posix_spawn) shares the parent's address space until exec; otherwise
 *    thps_fork copies it.
 *  - SYSCALL: mmap, munmap, mremap, mprotect, madvise and brk are made
 *    again at the addresses the kernel returned (MAP_FIXED), so the
 *    model's layout is the recorded one.  Calls that failed in the kernel
 *    are not made, but MADV_COLLAPSE, which failed under the recorder's
 *    PR_SET_THP_DISABLE and is made under the replay's policy.  mprotect
 *    and madvise over a range with foreign parts are made on each
 *    modelled piece.
 *  - TOUCH: each page of the modelled mappings in the range is read or
 *    written, as MAP_POPULATE, MADV_POPULATE_* and mlock do.
 *  - EXIT ends the address space (replay.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "trace/linux_abi.h"

#define MODEL_MAP_FLAGS (THPS_MAP_GROWSDOWN | THPS_MAP_NORESERVE | THPS_MAP_STACK)

#define PAGE_UP(x) (((x) + 4095) & ~4095ULL)

/* Tell the measures what happened to a range (measure.h). */
static void map_event(struct replay *r, struct replay_mm *mm, enum replay_map_op op, uint64_t start,
		      uint64_t len)
{
	struct replay_map_event e = { .op = op, .start = start, .len = PAGE_UP(len) };

	measures_mapping(r, mm, &e);
}

static void map_made(struct replay *r, struct replay_mm *mm, uint64_t start, uint64_t len, int kind,
		     enum replay_map_call call, int prot, int flags)
{
	struct replay_map_event e = { .op = REPLAY_MAP_NEW, .start = start, .len = PAGE_UP(len),
				      .kind = kind, .call = call, .prot = prot, .flags = flags,
				      .caller = replay_caller(r) };

	measures_mapping(r, mm, &e);
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
void replay_count_skip(struct replay *r, int why)
{
	r->res->skips[why]++;
}

/*
 * As the heap moves up a page at a time, its figures may change where a
 * boundary b reaches 2 MiB: there a break that ends the heap gains its last
 * block whole, and one page further the heap's start (start) loses its
 * first, so both shifts are marked for the start.
 */
void replay_heap_break(struct replay *r, uint64_t b, int start)
{
	uint64_t page = (b + 4095) / 4096 % REPLAY_HEAP_OFFSETS; /* its page within 2 MiB */
	uint64_t at = (REPLAY_HEAP_OFFSETS - page) % REPLAY_HEAP_OFFSETS;

	if (!r->layout.on || r->layout.probe) { /* the recorded addresses */
		r->res->heap_breaks[at] = 1;
		if (start)
			r->res->heap_breaks[(at + 1) % REPLAY_HEAP_OFFSETS] = 1;
	}
}

static void model_failed(struct replay *r, const char *call, int err)
{
	const char *why = thps_last_error(r->m);

	replay_count_skip(r, REPLAY_SKIP_call_failed);
	replay_note(r, "%s: the kernel did it, the model refused it: %s%s%s%s", call, strerror(-err),
	     *why ? " (" : "", why, *why ? ")" : ""); /* no empty "()" */
}

/* A fault the model could not take: why. */
static void fault_failed(struct replay *r, struct replay_mm *mm, uint64_t addr, int write, int err)
{
	int foreign;

	if (err == -ENOMEM)
		replay_count_skip(r, REPLAY_SKIP_fault_oom);
	else if ((foreign = foreign_is(mm, addr))) {
		replay_count_skip(r, REPLAY_SKIP_fault_file);
		if (foreign == 2 && write)
			foreign_cow_insert(mm, addr >> 12);
	} else { /* no mapping, or one that does not allow it: a SIGSEGV */
		replay_count_skip(r, REPLAY_SKIP_fault_unmapped);
	}
}

/* Make the pending run of faults. */
void replay_run_flush(struct replay *r)
{
	struct replay_mm *mm = r->run.mm;

	if (r->run.n)
		measures_touch(r, mm, r->run.start, r->run.n, r->run.write);
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
		if (err == -EINTR) { /* the OOM killer chose this process */
			r->res->skips[REPLAY_SKIP_oom_killed] += r->run.n - ok;
			/* the run's faults after the failing one were read ahead */
			r->kill_record = *r->nrecords - (r->run.n - ok);
			break;
		}
		fault_failed(r, mm, r->run.start + (ok << 12), r->run.write, err);
		r->run.start += (ok + 1) << 12;
		r->run.n -= ok + 1;
	}
	r->run.n = 0;
	replay_oom_check(r);
}

void replay_set_pending_brk(struct replay *r, struct replay_mm *mm)
{
	int err;

	if (!mm->brk_pending)
		return;
	mm->brk_pending = 0;
	err = thps_brk_init(mm->proc, mm->pending_start_brk, mm->pending_brk);
	if (err)
		replay_note(r, "exec of %s: the break %#llx..%#llx could not be set: %s", mm->name,
		     (unsigned long long)mm->pending_start_brk, (unsigned long long)mm->pending_brk,
		     thps_last_error(r->m));
}

void replay_exec(struct replay *r, struct trace_event *ev)
{
	struct task *t = replay_task(r, ev->pid, 1);
	const char *base = strrchr(ev->name, '/');
	struct replay_mm *mm;
	thps_proc *p;
	int err;

	if (!t)
		return;
	if (t->mm)
		replay_mm_put(r, t->mm, "exec");
	t->mm = NULL;
	r->cur = NULL;
	err = thps_proc_new(r->m, &p);
	if (err) {
		replay_note(r, "exec of %s: no memory for a new process", ev->name);
		return;
	}
	mm = replay_mm_new(r, ev->pid, base ? base + 1 : ev->name, p);
	if (!mm) {
		thps_exit(p);
		return;
	}
	if (ev->stack_limit)
		thps_set_stack_rlimit(p, ev->stack_limit);
	/* --as-recorded: the recorder's PR_SET_THP_DISABLE (fork inherits it) */
	if (r->o->thp_disabled)
		thps_prctl_thp_disable(p, 1);
	if (ev->start_brk)
		replay_heap_break(r, ev->start_brk, 1);
	if (r->layout.on)
		layout_exec(r, mm, ev);
	mm->pending_start_brk = ev->start_brk;
	mm->pending_brk = ev->brk;
	mm->brk_pending = ev->start_brk != 0;
	mm->brk_now = ev->brk;
	t->mm = mm;
	r->cur = mm;
	r->cur_pid = ev->pid;
}

void replay_vma(struct replay *r, struct trace_event *ev)
{
	struct replay_mm *mm = r->cur;
	uint64_t out;
	int err, flags = THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | THPS_MAP_FIXED;

	if (!mm)
		return;
	if (r->layout.on)
		layout_vma(r, mm, ev);
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
	else
		map_made(r, mm, ev->addr, ev->len,
			 ev->kind == TRACE_VMA_STACK  ? REPLAY_MAP_stack
			 : ev->kind == TRACE_VMA_HEAP ? REPLAY_MAP_heap
						      : REPLAY_MAP_exec_anon,
			 REPLAY_CALL_exec, ev->prot & 7, 0);
	if (ev->kind == TRACE_VMA_HEAP)
		replay_set_pending_brk(r, mm);
}

void replay_touch(struct replay *r, const struct trace_event *ev)
{
	static const enum piece_op ops[] = { PIECE_TOUCH_READ, PIECE_TOUCH_WRITE, PIECE_POPULATE };
	struct replay_mm *mm = r->cur;
	int err;

	if (!mm)
		return;
	if (ev->kind == TRACE_TOUCH_WRITE && ev->len <= (1ULL << 32)) {
		/* written pages of private file mappings are anonymous copies */
		for (uint64_t a = ev->addr & ~4095ULL; a < ev->addr + ev->len; a += 4096)
			if (foreign_is(mm, a) == 2)
				foreign_cow_insert(mm, a >> 12);
	}
	err = for_each_piece(r, mm->proc, ev->addr, ev->len, ops[ev->kind], 0);
	if (err == -ENOMEM)
		replay_count_skip(r, REPLAY_SKIP_fault_oom);
}

void replay_fork(struct replay *r, const struct trace_event *ev)
{
	struct replay_mm *parent = r->cur, *mm;
	struct task *t;
	thps_proc *child;
	int err;

	if (ev->clone_flags & LINUX_CLONE_THREAD)
		return; /* a thread: its accesses are its process's */
	t = replay_task(r, ev->child, 1);
	if (!t)
		return;
	if (t->mm) /* a pid reused without an EXIT: end the old one */
		replay_mm_put(r, t->mm, "exit");
	t->mm = NULL;
	if (!parent) {
		replay_note(r, "fork by pid %d, which the trace never introduced", ev->pid);
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
		replay_note(r, "fork of %s: %s", parent->name, thps_last_error(r->m));
		return;
	}
	mm = replay_mm_new(r, ev->child, parent->name, child);
	if (!mm) {
		thps_exit(child);
		return;
	}
	foreign_copy(mm, parent);
	mm->brk_now = parent->brk_now;
	if (parent->xlat)
		layout_fork(parent, mm);
	measures_fork(r, parent, mm);
	t->mm = mm;
	t = replay_task(r, r->cur_pid, 0); /* the table may have moved */
	r->cur = t ? t->mm : NULL;
}

void replay_exit(struct replay *r, const struct trace_event *ev)
{
	struct task *t = replay_task(r, ev->pid, 0);

	/* the status as wait(2) has it: a signal's number in the low bits */
	static const char *const by_signal[] = {
		"exit", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
		"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM",
		"SIGTERM",
	};
	int sig = (int)(ev->status & 0x7f);

	if (!t)
		return;
	replay_mm_put(r, t->mm, sig == 0 || sig == 0x7f ? "exit"
			 : sig < (int)(sizeof(by_signal) / sizeof(by_signal[0])) ? by_signal[sig]
										: "a signal");
	t->mm = NULL;
	pidtab_del(&r->tasks, ev->pid);
	r->cur = NULL;
}

void replay_kfig(struct replay *r, const struct trace_event *ev)
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
		replay_count_skip(r, REPLAY_SKIP_mmap_foreign);
		measures_freeing(r, mm);
		thps_munmap(mm->proc, addr, len);
		map_event(r, mm, REPLAY_MAP_UNMAP, addr, len);
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
	else
		map_made(r, mm, addr, len, -1, REPLAY_CALL_mmap, prot, flags);
}

static void sys_mremap(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	uint64_t old = ev->args[0], old_len = ev->args[1], new_len = ev->args[2];
	uint64_t to = (uint64_t)ev->ret, out;
	int flags = (int)ev->args[3], err;

	if (flags & 4) { /* MREMAP_DONTUNMAP */
		replay_count_skip(r, REPLAY_SKIP_call_unmodelled);
		replay_note(r, "mremap(MREMAP_DONTUNMAP) is not modelled");
		return;
	}
	if (foreign_is(mm, old)) {
		int priv = foreign_is(mm, old) == 2;

		foreign_remove(mm, old, old + old_len);
		measures_freeing(r, mm);
		thps_munmap(mm->proc, to, new_len);
		map_event(r, mm, REPLAY_MAP_UNMAP, to, new_len);
		foreign_add(mm, to, to + ((new_len + 4095) & ~4095ULL), priv);
		return;
	}
	foreign_remove(mm, to, to + new_len);
	measures_freeing(r, mm);
	if (to == old)
		err = thps_mremap(mm->proc, old, old_len, new_len, 0, 0, &out);
	else
		err = thps_mremap(mm->proc, old, old_len, new_len,
				  THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED, to, &out);
	if (err) {
		model_failed(r, "mremap", err);
	} else {
		struct replay_map_event e = { .op = REPLAY_MAP_MOVE, .start = to, .len = PAGE_UP(new_len),
					      .old = old, .old_len = PAGE_UP(old_len),
					      .caller = replay_caller(r) };

		measures_mapping(r, mm, &e);
	}
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
		replay_note(r, "MADV_COLLAPSE is made in the model; the recorded result is not compared "
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
		r->res->madv_hugepage_calls++;
		break;
	case LINUX_MADV_NOHUGEPAGE:
		model = THPS_MADV_NOHUGEPAGE;
		break;
	case LINUX_MADV_COLLAPSE:
		r->res->madv_collapse_calls++;
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
		replay_count_skip(r, REPLAY_SKIP_call_unmodelled);
		if (advice == LINUX_MADV_DONTFORK || advice == LINUX_MADV_WIPEONFORK)
			replay_note(r, "madvise advice %d (DONTFORK/WIPEONFORK) is not modelled", advice);
		return;
	}
	if (model == THPS_MADV_DONTNEED || model == THPS_MADV_FREE)
		measures_freeing(r, mm);
	err = thps_madvise(mm->proc, a, len, model);
	if (err == -ENOMEM) /* holes: foreign parts in the range */
		err = for_each_piece(r, mm->proc, a, len, PIECE_MADVISE, model);
	if (err && err != -ENOMEM) {
		model_failed(r, "madvise", err);
	} else {
		struct replay_map_event e = { .op = REPLAY_MAP_ADVISE, .start = a, .len = PAGE_UP(len),
					      .advice = advice };

		measures_mapping(r, mm, &e);
	}
}

/* brk: the heap mapping grows or shrinks with the break (the kernel's
 * VMA ends at the break rounded up to a page). */
static void sys_brk(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	uint64_t out = 0, old_end = PAGE_UP(mm->brk_now), new_end;
	int err;

	if (!ev->args[0] || (uint64_t)ev->ret != ev->args[0])
		return; /* a query, or refused: brk(2) then returns the old break */
	replay_heap_break(r, ev->args[0], 0);
	if (ev->args[0] < mm->brk_now)
		measures_freeing(r, mm);
	err = thps_brk(mm->proc, ev->args[0], &out);
	if (err || out != (uint64_t)ev->ret) {
		replay_count_skip(r, REPLAY_SKIP_brk_diverged);
		if (r->res->skips[REPLAY_SKIP_brk_diverged] == 1)
			replay_note(r, "brk(%#llx): the kernel returned %#llx, the model %#llx",
				    (unsigned long long)ev->args[0], (unsigned long long)ev->ret,
				    (unsigned long long)out);
		return;
	}
	mm->brk_now = out;
	new_end = PAGE_UP(out);
	if (new_end > old_end)
		map_made(r, mm, old_end, new_end - old_end, REPLAY_MAP_heap, REPLAY_CALL_brk,
			 3 /* PROT_READ | PROT_WRITE */, 0);
	else if (new_end < old_end)
		map_event(r, mm, REPLAY_MAP_UNMAP, new_end, old_end - new_end);
}

void replay_syscall(struct replay *r, const struct trace_event *ev)
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
	replay_set_pending_brk(r, mm);
	switch (ev->nr) {
	case LINUX_NR_mmap:
		sys_mmap(r, mm, ev);
		break;
	case LINUX_NR_munmap:
		foreign_remove(mm, ev->args[0], ev->args[0] + ev->args[1]);
		measures_freeing(r, mm);
		err = thps_munmap(mm->proc, ev->args[0], ev->args[1]);
		if (err)
			model_failed(r, "munmap", err);
		else
			map_event(r, mm, REPLAY_MAP_UNMAP, ev->args[0], ev->args[1]);
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
	case LINUX_NR_brk:
		sys_brk(r, mm, ev);
		break;
	case LINUX_NR_prctl:
		if (ev->args[0] == LINUX_PR_SET_THP_DISABLE) {
			if (ev->args[1] && ev->args[2]) {
				replay_count_skip(r, REPLAY_SKIP_call_unmodelled);
				replay_note(r, "prctl(PR_SET_THP_DISABLE) with flags %#llx is not modelled",
				     (unsigned long long)ev->args[2]);
			} else {
				thps_prctl_thp_disable(mm->proc, ev->args[1] != 0);
			}
		}
		break;
	case LINUX_NR_shmat: /* System V shared memory */
		replay_count_skip(r, REPLAY_SKIP_mmap_foreign);
		break;
	case LINUX_NR_process_madvise:
		replay_count_skip(r, REPLAY_SKIP_call_unmodelled);
		replay_note(r, "process_madvise is not modelled");
		break;
	default: /* fork, exec, mlock...: their own records do the work */
		break;
	}
}
