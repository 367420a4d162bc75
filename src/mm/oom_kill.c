/*
 * oom_kill.c - the OOM killer of the memory cgroup (mirrors mm/oom_kill.c's
 * out_of_memory for a memcg: select_bad_process, oom_badness,
 * oom_kill_process, and the OOM reaper).
 *
 * Entry points: mem_cgroup_out_of_memory, from a charge that reclaim could
 * not make room for (memcontrol.c); out_of_memory, from an allocation that
 * reclaim could not satisfy when the machine is full (page_alloc.c, with
 * thps_set_global_oom); thps_proc_oom_killed and thps_set_oom_score_adj.
 *
 * The victim is the process with the most points: its resident pages
 * (get_mm_rss: a THP counts 512) plus its page-table pages (and swap
 * entries: none here), plus oom_score_adj thousandths of memory.max; a
 * process at -1000 is never chosen, nor one already chosen.  On a tie the
 * newest wins: the cgroup's task list is oldest first and
 * oom_evaluate_task replaces its choice on equal points.  With memory.oom.group every process goes.
 *
 * The kill: the victim is marked, and its anonymous memory is unmapped at
 * once, as the OOM reaper does (__oom_reap_task_mm) before the task has
 * even run again; its VMAs and page tables stay until it exits
 * (thps_exit).  When the victim is the charging process itself, its
 * fault fails (-EINTR from the access) and its memory goes when it exits,
 * which the caller makes it do next.  Its children are processes of their own and keep their
 * memory.  The victim's lock is taken with a trylock, as the reaper does
 * (mmap_read_trylock): when another thread holds it, the victim is only
 * marked, nothing is freed, and the charge fails.
 */
#include "internal.h"

#define OOM_SCORE_ADJ_MIN (-1000)
#define OOM_SCORE_ADJ_MAX 1000

/* oom_badness: LONG_MIN for a process that may not be chosen. */
static int64_t oom_badness(const struct thps_proc *p, uint64_t totalpages)
{
	const struct mm_struct *mm = &p->mm;

	if (p->oom_score_adj == OOM_SCORE_ADJ_MIN || mm_flag_test(mm, MMF_OOM_SKIP) ||
	    mm_flag_test(mm, MMF_OOM_VICTIM))
		return INT64_MIN;
	return get_mm_rss(mm) + READ_ONCE(mm->pgtables_bytes) / (int64_t)PAGE_SIZE +
	       (int64_t)p->oom_score_adj * (int64_t)(totalpages / 1000);
}

/* __oom_reap_task_mm: unmap every VMA's pages; the VMAs stay. */
static void oom_reap_task_mm(struct mm_struct *mm)
{
	for (struct vm_area_struct *vma = mm->mmap; vma; vma = vma->vm_next)
		zap_page_range_vma(vma, vma->vm_start, vma->vm_end, false);
	mm_flag_set(mm, MMF_OOM_SKIP);
}

/* Mark p and reap it unless it is "held" (the charging process: its own
 * fault fails and it dies on the way out) or busy. */
static void oom_kill_one(struct thps_machine *m, struct thps_proc *p, struct mm_struct *held)
{
	mm_flag_set(&p->mm, MMF_OOM_VICTIM);
	__atomic_fetch_add(&m->memcg.events[THPS_MEMCG_oom_kill], 1, __ATOMIC_RELAXED);
	if (&p->mm == held)
		return; /* its fault fails, and it exits on the way out */
	if (spin_trylock(&p->mm.lock)) {
		oom_reap_task_mm(&p->mm);
		mm_unlock(&p->mm);
	}
}

/*
 * Choose and kill among every process (the cgroup holds them all): true
 * when something was killed (the allocation or charge is tried again),
 * false when no process may be chosen.  "held" is the process whose
 * allocation asked, whose lock the caller holds; totalpages scales
 * oom_score_adj (memory.max, or the machine's RAM).
 */
static bool oom_kill(struct thps_machine *m, struct mm_struct *held, uint64_t totalpages)
{
	struct mem_cgroup *memcg = &m->memcg;
	struct thps_proc *victim = NULL;
	int64_t chosen = INT64_MIN;
	bool group;

	spin_lock(&m->proc_lock);
	for (struct thps_proc *p = m->procs; p; p = p->next) {
		int64_t points = oom_badness(p, totalpages);

		/* the list is newest first: on a tie the newest stays chosen */
		if (points == INT64_MIN || (victim && points <= chosen))
			continue;
		victim = p;
		chosen = points;
	}
	spin_lock(&memcg->lock);
	group = memcg->oom_group;
	if (victim && group)
		__atomic_fetch_add(&memcg->events[THPS_MEMCG_oom_group_kill], 1, __ATOMIC_RELAXED);
	if (victim && !group)
		oom_kill_one(m, victim, held);
	for (struct thps_proc *p = m->procs; victim && group && p; p = p->next)
		if (!mm_flag_test(&p->mm, MMF_OOM_VICTIM) && p->oom_score_adj != OOM_SCORE_ADJ_MIN)
			oom_kill_one(m, p, held);
	spin_unlock(&memcg->lock);
	spin_unlock(&m->proc_lock);
	return victim != NULL;
}

/* out_of_memory for the cgroup (mem_cgroup_out_of_memory). */
bool mem_cgroup_out_of_memory(struct thps_machine *m, struct mm_struct *held)
{
	uint64_t totalpages = READ_ONCE(m->memcg.max);

	if (totalpages == UINT64_MAX || !totalpages)
		totalpages = m->totalram_pages ? m->totalram_pages : 1;
	return oom_kill(m, held, totalpages);
}

/* out_of_memory for the machine: the process asking is already a victim
 * (task_will_free_mem), or another is chosen among all. */
bool out_of_memory(struct thps_machine *m, struct mm_struct *held)
{
	if (held && mm_flag_test(held, MMF_OOM_VICTIM))
		return false;
	return oom_kill(m, held, m->totalram_pages ? m->totalram_pages : 1);
}

void thps_set_global_oom(thps_machine *m, int on)
{
	WRITE_ONCE(m->global_oom, on != 0);
}

int thps_proc_oom_killed(const thps_proc *p)
{
	return mm_flag_test(&p->mm, MMF_OOM_VICTIM);
}

int thps_set_oom_score_adj(thps_proc *p, int adj)
{
	if (adj < OOM_SCORE_ADJ_MIN || adj > OOM_SCORE_ADJ_MAX)
		return -EINVAL;
	p->oom_score_adj = adj;
	return 0;
}
