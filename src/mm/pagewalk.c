/*
 * pagewalk.c - a read-only walk of a VMA's page tables (mirrors the part of
 * mm/pagewalk.c's walk_page_range that the model needs).
 *
 * walk_page_range_vma visits [start, end) of one VMA, one PMD range at a
 * time: a huge PMD goes to ops->pmd_entry once, with the address of the
 * range's start; a PTE table's present entries go to ops->pte_entry one by
 * one (or, without one, the table's part in the range to ops->pte_range,
 * none entries included).  Empty ranges and none entries are otherwise
 * skipped.  A callback returning nonzero ends the walk with that value.
 * The walk changes nothing, so a caller that only reads (smaps, the
 * reverse map) needs no more than the lock of the mm it walks; a
 * pte_range callback may change the entries it gets when its caller holds
 * the locks that allows (the split's remap to the zero page).
 */
#include "internal.h"

int walk_page_range_vma(struct vm_area_struct *vma, uint64_t start, uint64_t end,
			const struct mm_walk_ops *ops, void *arg)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;

	for (uint64_t addr = start, next; addr < end; addr = next) {
		pmd_t *pmd = pmd_walk(mm, addr);
		pmd_t v;
		int ret;

		next = pmd_addr_end(addr, end);
		if (!pmd || pmd_none(v = pmdp_get(pmd)))
			continue;
		if (pmd_trans_huge(v)) {
			if (ops->pmd_entry && (ret = ops->pmd_entry(vma, v, addr, arg)))
				return ret;
			continue;
		}
		if (!ops->pte_entry) {
			ret = ops->pte_range(vma, pte_offset(m, pmd, addr),
					     (unsigned)((next - addr) >> PAGE_SHIFT), addr, arg);
			if (ret)
				return ret;
			continue;
		}
		for (pte_t *pte = pte_offset(m, pmd, addr); addr < next; addr += PAGE_SIZE, pte++) {
			pte_t e = ptep_get(pte);

			if (pte_present(e) && (ret = ops->pte_entry(vma, e, addr, arg)))
				return ret;
		}
	}
	return 0;
}
