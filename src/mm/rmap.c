/*
 * rmap.c - mapping counts and the reverse map of anonymous folios (mirrors
 * mm/rmap.c and the CONFIG_MM_ID parts of include/linux/rmap.h).
 *
 * Each page knows how many PTEs map it (_mapcount).  A large folio also
 * knows how many PMDs map it whole (_entire_mapcount), how many of its pages
 * are mapped at all (_nr_pages_mapped, plus ENTIRELY_MAPPED while a PMD maps
 * it), how many mappings it has in all (_large_mapcount) and which one or
 * two address spaces hold them (_mm_id slots), which is how Linux 6.18
 * decides without a walk whether a large folio "may be mapped shared".
 *
 * nr_anon_pages counts pages mapped by anyone; nr_anon_transparent_hugepages
 * counts folios mapped by a PMD.  A large folio that loses some but not all
 * of its mappings is queued for deferred split.
 *
 * The reverse walk (rmap_walk_locked, for Linux's rmap_walk_anon) finds
 * every mapping of a folio from its linear page index, which VMAs keep
 * through split and mremap (vm_pgoff), as Linux's anon_vma walk does.
 */
#include "internal.h"

/* ---- the large mapcount and its mm-id slots ---- */
static void folio_lock_large_mapcount(struct folio *folio)
{
	uint32_t *flags = &folio->_flags_1;

	while (__atomic_fetch_or(flags, 1U << PG_mapcount_lock, __ATOMIC_ACQUIRE) &
	       (1U << PG_mapcount_lock))
		;
}

static void folio_unlock_large_mapcount(struct folio *folio)
{
	__atomic_fetch_and(&folio->_flags_1, ~(1U << PG_mapcount_lock), __ATOMIC_RELEASE);
}

static uint32_t *mm_id_slot(struct folio *folio, int i)
{
	return i ? &folio->_mm_id_1 : &folio->_mm_id_0;
}

void folio_add_large_mapcount(struct folio *folio, int diff, struct vm_area_struct *vma)
{
	const uint32_t id = vma->vm_mm->mm_id;
	int val;

	folio_lock_large_mapcount(folio);
	val = atomic_read(&folio->_large_mapcount) + diff;
	atomic_set(&folio->_large_mapcount, val);
	if (*mm_id_slot(folio, 0) == id) {
		folio->_mm_id_mapcount[0] += diff;
	} else if (*mm_id_slot(folio, 1) == id) {
		folio->_mm_id_mapcount[1] += diff;
	} else if (*mm_id_slot(folio, 0) == 0) {
		*mm_id_slot(folio, 0) = id;
		folio->_mm_id_mapcount[0] = diff;
		if (val != diff) /* others map it already */
			folio->_mm_ids_shared = 1;
	} else if (*mm_id_slot(folio, 1) == 0) {
		*mm_id_slot(folio, 1) = id;
		folio->_mm_id_mapcount[1] = diff;
		folio->_mm_ids_shared = 1;
	}
	folio_unlock_large_mapcount(folio);
}

static void folio_sub_large_mapcount(struct folio *folio, int diff, struct vm_area_struct *vma)
{
	const uint32_t id = vma->vm_mm->mm_id;
	int val;

	folio_lock_large_mapcount(folio);
	val = atomic_read(&folio->_large_mapcount) - diff;
	atomic_set(&folio->_large_mapcount, val);
	for (int i = 0; i < 2; i++) {
		if (*mm_id_slot(folio, i) != id)
			continue;
		folio->_mm_id_mapcount[i] -= diff;
		if (folio->_mm_id_mapcount[i] > 0)
			goto out;
		folio->_mm_id_mapcount[i] = 0;
		*mm_id_slot(folio, i) = 0;
		break;
	}
	/* One slot owning every mapping means exclusive again. */
	if (folio->_mm_id_mapcount[0] == val || folio->_mm_id_mapcount[1] == val)
		folio->_mm_ids_shared = 0;
out:
	folio_unlock_large_mapcount(folio);
}

bool folio_maybe_mapped_shared(struct folio *folio)
{
	if (!folio_test_large(folio))
		return atomic_read(&folio->_mapcount) > 1;
	return READ_ONCE(folio->_mm_ids_shared) != 0;
}

/* ---- statistics ---- */
static void folio_mod_stat(struct folio *folio, struct vm_area_struct *vma, int nr,
			   int nr_pmdmapped)
{
	struct mm_struct *mm = vma->vm_mm;

	if (nr)
		mod_node_page_state(mm->m, mm, THPS_VM_nr_anon_pages, nr);
	if (nr_pmdmapped)
		mod_node_page_state(mm->m, mm, THPS_VM_nr_anon_transparent_hugepages,
				    nr_pmdmapped > 0 ? 1 : -1);
}

/* ---- adding mappings ---- */
void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma, uint64_t addr,
			     bool pmd)
{
	struct page *head = (struct page *)folio;

	VM_BUG_ON_VMA(!vma->anon_vma, vma);
	/* a new folio: nobody else can see it yet, so plain stores do */
	__SetPageAnon(head);
	folio->index = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	if (!folio_test_large(folio)) {
		atomic_set(&folio->_mapcount, 1);
		__SetPageAnonExclusive(head);
		folio_mod_stat(folio, vma, 1, 0);
		return;
	}
	mod_mthp_stat(vma->vm_mm->m, folio_order(folio), THPS_MTHP_nr_anon, 1);
	if (!pmd) {
		/* a multi-size THP mapped by one PTE per page, all exclusive */
		const int nr = (int)folio_nr_pages(folio);

		for (int i = 0; i < nr; i++) {
			atomic_set(&head[i]._mapcount, 1);
			__SetPageAnonExclusive(&head[i]);
		}
		atomic_set(&folio->_nr_pages_mapped, nr);
		folio_add_large_mapcount(folio, nr, vma);
		folio_mod_stat(folio, vma, nr, 0);
		return;
	}
	atomic_set(&folio->_entire_mapcount, 1);
	atomic_set(&folio->_nr_pages_mapped, ENTIRELY_MAPPED);
	folio_add_large_mapcount(folio, 1, vma);
	__SetPageAnonExclusive(head);
	folio_mod_stat(folio, vma, (int)folio_nr_pages(folio), 1);
}

/* Map nr pages of a folio by PTEs (Linux's folio_add_anon_rmap_ptes with
 * RMAP_EXCLUSIVE when "exclusive"); used when a PMD is split. */
void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma)
{
	int first = 0;

	for (int i = 0; i < nr; i++)
		if (atomic_add_return(1, &page[i]._mapcount) == 1)
			first++;
	if (!folio_test_large(folio)) {
		folio_mod_stat(folio, vma, first, 0);
		return;
	}
	folio_add_large_mapcount(folio, nr, vma);
	if (first && atomic_add_return(first, &folio->_nr_pages_mapped) >= ENTIRELY_MAPPED)
		first = 0;
	folio_mod_stat(folio, vma, first, 0);
}

void folio_add_anon_rmap_pmd(struct folio *folio, struct vm_area_struct *vma)
{
	int nr = 0, nr_pmdmapped = 0;

	if (atomic_add_return(1, &folio->_entire_mapcount) == 1) {
		int mapped = atomic_add_return(ENTIRELY_MAPPED, &folio->_nr_pages_mapped);

		nr_pmdmapped = (int)folio_nr_pages(folio);
		nr = nr_pmdmapped - (mapped & FOLIO_PAGES_MAPPED);
	}
	folio_add_large_mapcount(folio, 1, vma);
	folio_mod_stat(folio, vma, nr, nr_pmdmapped);
}

/* fork: the child maps what the parent maps; nobody is exclusive any more. */
void folio_dup_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *dst_vma)
{
	for (int i = 0; i < nr; i++) {
		atomic_inc(&page[i]._mapcount);
		if (PageAnonExclusive(&page[i]))
			ClearPageAnonExclusive(&page[i]);
	}
	if (folio_test_large(folio))
		folio_add_large_mapcount(folio, nr, dst_vma);
}

void folio_dup_anon_rmap_pmd(struct folio *folio, struct vm_area_struct *dst_vma)
{
	struct page *head = (struct page *)folio;

	atomic_inc(&folio->_entire_mapcount);
	folio_add_large_mapcount(folio, 1, dst_vma);
	if (PageAnonExclusive(head))
		ClearPageAnonExclusive(head);
}

/* ---- removing mappings ---- */
void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma)
{
	struct thps_machine *m = vma->vm_mm->m;
	const bool unshared = page_unshared(page); /* order 0: nr is 1 */
	int last = 0, nr_unmapped = 0;
	bool partially_mapped = false;

	for (int i = 0; i < nr; i++) {
		int c = unshared ? atomic_add_return_unshared(-1, &page[i]._mapcount)
				 : atomic_add_return(-1, &page[i]._mapcount);

		VM_BUG_ON_PAGE(c < 0, m, &page[i]);
		if (c == 0)
			last++;
	}
	if (!folio_test_large(folio)) {
		folio_mod_stat(folio, vma, -last, 0);
		return;
	}
	folio_sub_large_mapcount(folio, nr, vma);
	if (last) {
		int mapped = atomic_add_return(-last, &folio->_nr_pages_mapped);

		if (mapped < ENTIRELY_MAPPED)
			nr_unmapped = last;
		partially_mapped = nr_unmapped && mapped;
	}
	/* thpsim/deferred_split before Linux 6.10: the folio was queued
	 * whenever one of its pages lost its last mapping */
	if (KNOB(m, deferred_split) != DEFERRED_SPLIT_PARTIAL)
		partially_mapped = nr_unmapped;
	if (partially_mapped && folio_test_anon(folio) && !folio_test_partially_mapped(folio))
		deferred_split_folio(m, vma->vm_mm, folio, true);
	folio_mod_stat(folio, vma, -nr_unmapped, 0);
}

void folio_remove_rmap_pmd(struct folio *folio, struct vm_area_struct *vma)
{
	struct thps_machine *m = vma->vm_mm->m;
	int nr = 0, nr_pmdmapped = 0;
	bool partially_mapped = false;

	folio_sub_large_mapcount(folio, 1, vma);
	if (atomic_add_return(-1, &folio->_entire_mapcount) == 0) {
		int mapped = atomic_add_return(-ENTIRELY_MAPPED, &folio->_nr_pages_mapped);

		if (mapped < ENTIRELY_MAPPED) {
			nr_pmdmapped = (int)folio_nr_pages(folio);
			nr = nr_pmdmapped - (mapped & FOLIO_PAGES_MAPPED);
			if (nr < 0)
				nr = 0;
		}
		partially_mapped = nr && nr < nr_pmdmapped;
	}
	VM_BUG_ON_PAGE(folio_entire_mapcount(folio) < 0, m, (struct page *)folio);
	if (partially_mapped && folio_test_anon(folio) && !folio_test_partially_mapped(folio))
		deferred_split_folio(m, vma->vm_mm, folio, true);
	folio_mod_stat(folio, vma, -nr, -nr_pmdmapped);
}

/* ---- reverse walk ---- */
uint64_t vma_address(const struct vm_area_struct *vma, uint64_t pgoff)
{
	return vma->vm_start + ((pgoff - vma->vm_pgoff) << PAGE_SHIFT);
}

/* What one mm's walk for a folio carries: a callback per mapping, or
 * (tables) one per page table's part of the folio's range. */
struct rmap_walk_arg {
	const struct rmap_range *r;
	rmap_fn fn;
	rmap_table_fn tables;
	void *arg;
};

static int rmap_pmd_entry(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg)
{
	struct rmap_walk_arg *w = arg;

	if (pmd_pfn(pmd) != w->r->pfn)
		return 0;
	return w->fn(vma->vm_mm, vma, addr & HPAGE_PMD_MASK, true, w->arg);
}

static int rmap_pte_entry(struct vm_area_struct *vma, pte_t pte, uint64_t addr, void *arg)
{
	struct rmap_walk_arg *w = arg;

	if (!rmap_range_maps(w->r, pte))
		return 0;
	return w->fn(vma->vm_mm, vma, addr, false, w->arg);
}

static int rmap_pte_range(struct vm_area_struct *vma, pte_t *pte, unsigned n, uint64_t addr,
			  void *arg)
{
	struct rmap_walk_arg *w = arg;

	return w->tables(vma->vm_mm, vma, pte, n, addr, w->r, w->arg);
}

static int rmap_walk_mm(struct mm_struct *mm, const struct mm_walk_ops *ops,
			struct rmap_walk_arg *w)
{
	const struct rmap_range *r = w->r;

	for (struct vm_area_struct *vma = mm->mmap; vma; vma = vma->vm_next) {
		uint64_t v_first = vma->vm_pgoff;
		uint64_t v_last = v_first + ((vma->vm_end - vma->vm_start) >> PAGE_SHIFT);
		uint64_t lo = r->index > v_first ? r->index : v_first;
		uint64_t hi = r->index + r->nr < v_last ? r->index + r->nr : v_last;
		int ret;

		if (lo >= hi)
			continue;
		ret = walk_page_range_vma(vma, vma_address(vma, lo), vma_address(vma, hi), ops, w);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Lock every process but "held" (the caller's own, already locked), so that a
 * walk, or several, see one moment.  trylock only: the caller may hold its
 * own process lock, and another thread may hold its lock while it waits for
 * ours.  -EBUSY when some process is busy; nothing is then held.  On
 * success the process list stays locked until rmap_unlock_all().
 */
int rmap_lock_all(struct thps_machine *m, struct mm_struct *held)
{
	spin_lock(&m->proc_lock);
	for (struct thps_proc *p = m->procs; p; p = p->next) {
		if (&p->mm == held || spin_trylock(&p->mm.lock))
			continue;
		for (struct thps_proc *q = m->procs; q != p; q = q->next)
			if (&q->mm != held)
				spin_unlock(&q->mm.lock);
		spin_unlock(&m->proc_lock);
		return -EBUSY;
	}
	return 0;
}

void rmap_unlock_all(struct thps_machine *m, struct mm_struct *held)
{
	for (struct thps_proc *p = m->procs; p; p = p->next)
		if (&p->mm != held)
			spin_unlock(&p->mm.lock);
	spin_unlock(&m->proc_lock);
}

struct rmap_range rmap_folio_range(struct thps_machine *m, struct folio *folio)
{
	return (struct rmap_range){ .index = folio->index,
				    .nr = (uint64_t)folio_nr_pages(folio),
				    .pfn = folio_pfn(m, folio) };
}

int rmap_walk_locked(struct thps_machine *m, const struct rmap_range *r, rmap_fn fn, void *arg)
{
	static const struct mm_walk_ops ops = { .pmd_entry = rmap_pmd_entry,
						.pte_entry = rmap_pte_entry };
	struct rmap_walk_arg w = { r, fn, NULL, arg };
	int ret = 0;

	for (struct thps_proc *p = m->procs; p && !ret; p = p->next)
		ret = rmap_walk_mm(&p->mm, &ops, &w);
	return ret;
}

int rmap_walk_tables_locked(struct thps_machine *m, const struct rmap_range *r,
			    rmap_table_fn tables, void *arg)
{
	static const struct mm_walk_ops ops = { .pte_range = rmap_pte_range };
	struct rmap_walk_arg w = { r, NULL, tables, arg };
	int ret = 0;

	for (struct thps_proc *p = m->procs; p && !ret; p = p->next)
		ret = rmap_walk_mm(&p->mm, &ops, &w);
	return ret;
}
