/*
 * fork.c - processes: creation, fork and exit, and the machine that holds
 * them (mirrors kernel/fork.c's dup_mmap, kernel/exit.c and __mmput).
 *
 * Entry points: thps_machine_new/free, thps_proc_new, thps_fork, thps_exit.
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

/* ---- the machine ---- */
int thps_machine_new(const struct thps_config *cfg, thps_machine **out)
{
	uint64_t ram = cfg && cfg->ram_bytes ? cfg->ram_bytes : 4ULL << 30;
	thps_machine *m;
	int err;

	*out = NULL;
	m = aligned_alloc(CACHELINE_BYTES, ALIGN_UP(sizeof(*m), CACHELINE_BYTES));
	if (!m)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	spin_lock_init(&m->knob_lock);
	spin_lock_init(&m->stat_lock);
	spin_lock_init(&m->proc_lock);
	spin_lock_init(&m->fail_lock);
	spin_lock_init(&m->khugepaged_lock);
	spin_lock_init(&m->err_lock);
	knobs_init(&m->knobs);
	huge_memory_init(m);
	m->next_pid = 1;
	err = page_alloc_init(m, ram >> PAGE_SHIFT);
	if (err) {
		thps_machine_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void thps_machine_free(thps_machine *m)
{
	if (!m)
		return;
	while (m->procs)
		thps_exit(m->procs);
	if (m->mem_map) {
		/* the shrinker's reference is the last one: free the page */
		if (READ_ONCE(m->huge_zero_pfn) != NO_PFN) {
			atomic_set(&m->huge_zero_refcount, 1);
			m->knobs.hzp_lifetime = HZP_PER_MM;
			shrink_huge_zero_page_scan(m);
		}
		page_alloc_exit(m);
	}
	huge_memory_exit(m);
	spin_lock_destroy(&m->knob_lock);
	spin_lock_destroy(&m->stat_lock);
	spin_lock_destroy(&m->proc_lock);
	spin_lock_destroy(&m->fail_lock);
	spin_lock_destroy(&m->khugepaged_lock);
	spin_lock_destroy(&m->err_lock);
	free(m->check_scratch);
	free(m);
}
