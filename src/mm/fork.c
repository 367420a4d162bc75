/*
 * fork.c - processes: creation, fork and exit (mirrors kernel/fork.c's
 * mm_init and dup_mmap, kernel/exit.c and __mmput).  The machine that holds
 * them is set up in mm_init.c.
 *
 * Entry points: thps_proc_new, thps_fork, thps_exit.
 *
 * fork copies every VMA; copy_page_range shares anonymous pages and THPs
 * write-protected and maps the huge zero page in the child too.  If fork
 * runs out of memory half way, the child is torn down and fork returns
 * -ENOMEM; the parent keeps its mappings (some now write-protected, which
 * only costs it a spurious fault, as in Linux).
 *
 * exit tears the address space down (exit_mmap), then drops the process's
 * huge zero page reference when it holds one (the per-mm lifetime), frees
 * the top-level table, parks its cached frames for the next process
 * (page_alloc.c) and folds its counters into the machine's.
 */
#include "internal.h"

int mm_init(struct thps_machine *m, struct mm_struct *mm)
{
	memset(mm, 0, sizeof(*mm));
	mm->m = m;
	spin_lock_init(&mm->lock);
	raw_spin_lock_init(&mm->pcp.lock);
	mm->deposit_head = NO_PFN;
	mm->pgd = NO_PFN;
	mm->fault_addr = FAULT_ADDR_NONE;
	mmap_init_layout(mm);
	return 0;
}

static struct thps_proc *proc_alloc(struct thps_machine *m)
{
	struct thps_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->m = m;
	mm_init(m, &p->mm);
	spin_lock(&m->proc_lock);
	p->pid = m->next_pid++;
	p->mm.mm_id = ++m->next_mm_id;
	p->next = m->procs;
	if (m->procs)
		m->procs->prev = p;
	m->procs = p;
	spin_unlock(&m->proc_lock);
	return p;
}

/* The last step of exit: off the list, caches back, counters folded. */
static void proc_release(struct thps_proc *p)
{
	struct thps_machine *m = p->m;

	park_pcp(m, &p->mm);
	spin_lock(&m->proc_lock);
	if (p->prev)
		p->prev->next = p->next;
	else
		m->procs = p->next;
	if (p->next)
		p->next->prev = p->prev;
	vmstat_fold_mm(m, &p->mm);
	spin_unlock(&m->proc_lock);
	spin_lock_destroy(&p->mm.lock);
	free(p);
}

/* __mmput: everything the address space holds goes. mm lock held. */
void mmput(struct mm_struct *mm)
{
	khugepaged_exit(mm);
	exit_mmap(mm);
	mm_put_huge_zero_folio(mm);
	if (mm->pgd != NO_PFN)
		pgd_free(mm);
	VM_BUG_ON_MM(mm->nr_deposited || mm->pgtables_bytes || get_mm_rss(mm), mm);
}

int thps_proc_new(thps_machine *m, thps_proc **out)
{
	thps_proc *p = proc_alloc(m);
	int err;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	mm_lock(&p->mm);
	err = pgd_alloc(&p->mm);
	mm_unlock(&p->mm);
	if (err) {
		proc_release(p);
		return machine_error(m, err, "process: no memory for a page table");
	}
	*out = p;
	return 0;
}

static int dup_mmap(struct mm_struct *mm, struct mm_struct *oldmm)
{
	for (struct vm_area_struct *mpnt = oldmm->mmap; mpnt; mpnt = mpnt->vm_next) {
		struct vm_area_struct *tmp = vm_area_dup(mpnt);
		int err;

		if (!tmp)
			return -ENOMEM;
		tmp->vm_mm = mm;
		/* anon_vma_fork: the child's own anon_vma, chained to the parent's */
		if (mpnt->anon_vma) {
			tmp->anon_vma = ++mm->next_anon_vma;
			tmp->anon_vma_chained = true;
		}
		vma_link(mm, tmp);
		err = copy_page_range(tmp, mpnt);
		if (err)
			return err;
	}
	return 0;
}

int thps_fork(thps_proc *parent, thps_proc **out)
{
	struct thps_machine *m = parent->m;
	thps_proc *child;
	struct mm_struct *mm, *oldmm = &parent->mm;
	int err;

	*out = NULL;
	child = proc_alloc(m);
	if (child)
		child->oom_score_adj = parent->oom_score_adj;
	if (!child)
		return -ENOMEM;
	mm = &child->mm;
	mm_lock(oldmm);
	mm_lock(mm);
	err = pgd_alloc(mm);
	if (!err) {
		mm->flags = oldmm->flags & ((1UL << MMF_DISABLE_THP_COMPLETELY) |
					    (1UL << MMF_DISABLE_THP_EXCEPT_ADVISED));
		mm->mmap_base = oldmm->mmap_base;
		mm->start_brk = oldmm->start_brk;
		mm->brk = oldmm->brk;
		mm->stack_rlimit = oldmm->stack_rlimit;
		err = dup_mmap(mm, oldmm);
		if (!err)
			khugepaged_fork(mm, oldmm);
	}
	mm_unlock(oldmm);
	if (err) {
		mmput(mm);
		mm_unlock(mm);
		proc_release(child);
		return machine_error(m, err, "fork: out of memory");
	}
	mm_unlock(mm);
	*out = child;
	return 0;
}

void thps_exit(thps_proc *p)
{
	if (!p)
		return;
	mm_lock(&p->mm);
	mmput(&p->mm);
	mm_unlock(&p->mm);
	proc_release(p);
}

int thps_pid(const thps_proc *p)
{
	return p->pid;
}
