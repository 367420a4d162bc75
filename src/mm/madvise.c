/*
 * madvise.c - MADV_HUGEPAGE, MADV_NOHUGEPAGE, MADV_DONTNEED, MADV_FREE and
 * prctl(PR_SET_THP_DISABLE) (mirrors mm/madvise.c, hugepage_madvise() in
 * mm/khugepaged.c and the THP part of kernel/sys.c).
 *
 * MADV_HUGEPAGE and MADV_NOHUGEPAGE only change VMA flags (splitting and
 * merging VMAs): nothing already mapped changes, later faults see the new
 * eligibility.  MADV_DONTNEED zaps the range: a huge zero PMD wholly inside
 * is cleared, a partly covered huge PMD is split first; with
 * CONFIG_PT_RECLAIM (Linux 6.14+, where built: thpsim/pt_reclaim) a PTE
 * table whose whole 2 MiB it zapped is freed.
 *
 * MADV_FREE marks the process's own pages clean (lazily freeable): Rss does
 * not change, Private_Dirty becomes Private_Clean.  The huge zero page and
 * shared pages are left alone.  A THP the range covers only in part is
 * split at once, PMD and folio (madvise_free_huge_pmd; observed: S20b).
 * Reclaim, which would free lazily freeable pages, is not modelled.
 *
 * MADV_COLLAPSE (khugepaged.c: madvise_collapse) is walked over the VMAs
 * as Linux's madvise_walk_vmas does: VMA after VMA, stopping at the first
 * that fails (the VMAs before it keep their collapses); holes are skipped
 * and reported as -ENOMEM at the end.
 *
 * Divergence: for the other advice, Linux applies it to each mapped part
 * and returns -ENOMEM if the range had holes; the model checks first and
 * then changes nothing.
 */
#include "internal.h"

static int madvise_update_flags(struct mm_struct *mm, uint64_t start, uint64_t end, int advice)
{
	for (uint64_t nstart = start; nstart < end;) {
		struct vm_area_struct *vma = find_vma(mm, nstart);
		uint64_t tmp = vma->vm_end < end ? vma->vm_end : end;
		uint64_t flags = vma->vm_flags;
		int err;

		if (advice == THPS_MADV_HUGEPAGE)
			flags = (flags & ~VM_NOHUGEPAGE) | VM_HUGEPAGE;
		else
			flags = (flags & ~VM_HUGEPAGE) | VM_NOHUGEPAGE;
		vma = vma_modify_flags(vma, nstart, tmp, flags, &err);
		if (err)
			return err;
		if (advice == THPS_MADV_HUGEPAGE)
			khugepaged_enter_vma(vma, flags); /* hugepage_madvise */
		nstart = tmp;
	}
	return 0;
}

/*
 * madvise_free_pte_range: each exclusive page in the range becomes clean and
 * old (lazily freeable).  A large folio the range covers whole is marked as
 * one, if only this process maps all of it; one it covers in part is split
 * first (split_folio), then its pages are taken one by one; one that may be
 * shared is left alone.  This is Linux 6.8+'s walk; Linux 6.1 splits a large
 * folio only when mapped once and otherwise stops the walk (not modelled).
 */
static void madvise_free_pte_range(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr,
				   uint64_t end)
{
	struct thps_machine *m = vma->vm_mm->m;
	pte_t *pte = pte_offset(m, pmd, addr);
	int nr;

	for (; addr < end; addr += (uint64_t)nr << PAGE_SHIFT, pte += nr) {
		pte_t entry = ptep_get(pte);
		struct page *page;
		struct folio *folio;

		nr = 1;
		if (!pte_present(entry))
			continue;
		page = vm_normal_page(vma, entry);
		if (!page)
			continue;
		folio = page_folio(m, page);
		if (folio_test_large(folio)) {
			nr = folio_pte_batch(m, folio, page, pte, (end - addr) >> PAGE_SHIFT);
			if (nr < folio_nr_pages(folio)) {
				if (!folio_maybe_mapped_shared(folio) &&
				    split_folio(m, folio, vma->vm_mm) == 0)
					nr = 0; /* again, page by page */
				continue;
			}
			if (folio_mapcount(folio) != folio_nr_pages(folio))
				continue;
		} else if (folio_maybe_mapped_shared(folio)) {
			continue;
		}
		for (int i = 0; i < nr; i++)
			set_pte(pte + i, pte_mkold(pte_mkclean(ptep_get(pte + i))));
	}
}

static void madvise_free_vma(struct vm_area_struct *vma, uint64_t start, uint64_t end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;

	for (uint64_t addr = start, next; addr < end; addr = next) {
		pmd_t *pmd = pmd_walk(mm, addr);
		pmd_t v;

		next = pmd_addr_end(addr, end);
		if (!pmd || pmd_none(v = pmdp_get(pmd)))
			continue;
		if (pmd_trans_huge(v)) {
			struct page *page = vm_normal_page_pmd(vma, v);
			struct folio *folio;

			if (!page) /* the huge zero page */
				continue;
			folio = page_folio(m, page);
			if (folio_maybe_mapped_shared(folio))
				continue;
			if (next - addr == HPAGE_PMD_SIZE) {
				set_pmd(pmd, pmd_mkold(pmd_mkclean(v)));
				continue;
			}
			/* part of it: split PMD and folio, then the 4 KiB path */
			if (split_folio(m, folio, mm))
				continue;
		}
		madvise_free_pte_range(vma, pmd, addr, next);
	}
}

static void madvise_dontneed(struct mm_struct *mm, uint64_t start, uint64_t end)
{
	update_hiwater_rss(mm);
	for (uint64_t nstart = start; nstart < end;) {
		struct vm_area_struct *vma = find_vma(mm, nstart);
		uint64_t tmp = vma->vm_end < end ? vma->vm_end : end;

		zap_page_range_vma(vma, nstart, tmp, true);
		nstart = tmp;
	}
}

/* madvise_walk_vmas with madvise_collapse as the visitor. */
static int madvise_collapse_walk(struct mm_struct *mm, uint64_t start, uint64_t end)
{
	int unmapped_error = 0;

	while (start < end) {
		struct vm_area_struct *vma = find_vma(mm, start);
		uint64_t tmp;
		int err;

		if (!vma)
			return -ENOMEM;
		if (start < vma->vm_start) {
			unmapped_error = -ENOMEM;
			start = vma->vm_start;
			if (start >= end)
				break;
		}
		tmp = vma->vm_end < end ? vma->vm_end : end;
		err = madvise_collapse(vma, start, tmp);
		if (err)
			return err;
		start = tmp;
	}
	return unmapped_error;
}

int thps_madvise(thps_proc *p, uint64_t start, uint64_t len, int advice)
{
	struct mm_struct *mm = &p->mm;
	struct thps_machine *m = mm->m;
	uint64_t end;
	int err = 0;

	switch (advice) {
	case THPS_MADV_NORMAL:
	case THPS_MADV_DONTNEED:
	case THPS_MADV_FREE:
	case THPS_MADV_HUGEPAGE:
	case THPS_MADV_NOHUGEPAGE:
	case THPS_MADV_COLLAPSE:
		break;
	default:
		return machine_error(m, -EINVAL, "madvise: advice %d not modelled", advice);
	}
	/* is_valid_madvise: a length that rounds up to zero, or a range that
	 * wraps, is invalid; past TASK_SIZE nothing is mapped (-ENOMEM below) */
	if (!IS_ALIGNED(start, PAGE_SIZE))
		return machine_error(m, -EINVAL, "madvise: address %#llx not page aligned",
				     (unsigned long long)start);
	end = start + PAGE_ALIGN(len);
	if ((len && !PAGE_ALIGN(len)) || end < start)
		return machine_error(m, -EINVAL, "madvise: range %#llx+%#llx wraps",
				     (unsigned long long)start, (unsigned long long)len);
	len = PAGE_ALIGN(len);
	if (!len)
		return 0;
	mm_lock(mm);
	if (advice == THPS_MADV_COLLAPSE) {
		err = madvise_collapse_walk(mm, start, end);
		goto out;
	}
	for (uint64_t nstart = start; nstart < end;) {
		struct vm_area_struct *vma = find_vma(mm, nstart);

		if (!vma || vma->vm_start > nstart) {
			err = machine_error(m, -ENOMEM, "madvise: %#llx is not mapped",
					    (unsigned long long)nstart);
			goto out;
		}
		nstart = vma->vm_end;
	}
	switch (advice) {
	case THPS_MADV_HUGEPAGE:
	case THPS_MADV_NOHUGEPAGE:
		err = madvise_update_flags(mm, start, end, advice);
		break;
	case THPS_MADV_DONTNEED:
		madvise_dontneed(mm, start, end);
		break;
	case THPS_MADV_FREE:
		update_hiwater_rss(mm);
		for (uint64_t nstart = start; nstart < end;) {
			struct vm_area_struct *vma = find_vma(mm, nstart);
			uint64_t tmp = vma->vm_end < end ? vma->vm_end : end;

			madvise_free_vma(vma, nstart, tmp);
			nstart = tmp;
		}
		break;
	default:
		break;
	}
out:
	mm_unlock(mm);
	return err;
}

int thps_prctl_thp_disable(thps_proc *p, int value)
{
	struct mm_struct *mm = &p->mm;

	mm_lock(mm);
	mm->flags &= ~((1UL << MMF_DISABLE_THP_COMPLETELY) | (1UL << MMF_DISABLE_THP_EXCEPT_ADVISED));
	if (value)
		mm->flags |= 1UL << MMF_DISABLE_THP_COMPLETELY;
	mm_unlock(mm);
	return 0;
}
