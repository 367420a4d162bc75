/*
 * mprotect.c - changing the protection of a range (mirrors mm/mprotect.c).
 *
 * Entry point: thps_mprotect.  The VMAs are split at the ends of the range
 * (splitting any huge PMD the new boundary cuts), given the new flags and
 * merged again with neighbours that now match; then every entry in the range
 * gets the new protection.  A huge PMD wholly inside the range is changed as
 * one entry (change_huge_pmd); the huge zero page stays write-protected
 * whatever the new protection (the series' patch 5).
 *
 * Private writable mappings are read-only in their entries; making a range
 * writable again upgrades only entries of pages this process owns alone
 * (PageAnonExclusive), so shared and zero pages still fault and copy.
 *
 * Divergence: Linux applies the change VMA by VMA and returns -ENOMEM at the
 * first hole, leaving the part before it changed; the model checks the whole
 * range first and changes nothing when it has a hole.
 */
#include "internal.h"

#define PROT_SEM 0x8 /* x86: accepted by mprotect, no effect */

static void change_pte_range(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, uint64_t end,
			     pgprot_t newprot, bool try_writable)
{
	struct thps_machine *m = vma->vm_mm->m;
	pte_t *pte = pte_offset(m, pmd, addr);

	for (; addr < end; addr += PAGE_SIZE, pte++) {
		pte_t old = ptep_get(pte), entry;

		if (!pte_present(old))
			continue;
		entry = pte_modify(old, newprot);
		if (try_writable && !pte_protnone(entry)) {
			/* can_change_pte_writable for a private mapping */
			struct page *page = vm_normal_page(vma, entry);

			if (page && PageAnonExclusive(page))
				entry = pte_mkwrite(entry);
		}
		set_pte(pte, entry);
	}
}

static void change_protection(struct vm_area_struct *vma, uint64_t start, uint64_t end)
{
	struct mm_struct *mm = vma->vm_mm;
	pgprot_t newprot = vma->vm_page_prot;
	/* vma_wants_manual_pte_write_upgrade: private and writable */
	bool try_writable = (vma->vm_flags & (VM_WRITE | VM_SHARED)) == VM_WRITE;

	for (uint64_t addr = start, next; addr < end; addr = next) {
		pmd_t *pmd = pmd_walk(mm, addr);
		pmd_t v;

		next = pmd_addr_end(addr, end);
		if (!pmd)
			continue;
		v = pmdp_get(pmd);
		if (pmd_none(v))
			continue;
		if (pmd_trans_huge(v)) {
			if (next - addr != HPAGE_PMD_SIZE)
				__split_huge_pmd(vma, pmd, addr);
			else if (change_huge_pmd(vma, pmd, addr, newprot, try_writable))
				continue;
		}
		change_pte_range(vma, pmd, addr, next, newprot, try_writable);
	}
}

int mprotect_fixup(struct vm_area_struct *vma, struct vm_area_struct **pprev, uint64_t start,
		   uint64_t end, uint64_t newflags)
{
	uint64_t oldflags = vma->vm_flags;
	int err;

	if (newflags == oldflags) {
		*pprev = vma;
		return 0;
	}
	/* accounting: a private mapping made writable is charged (VM_ACCOUNT);
	 * an anonymous one made read-only before its first page is not */
	if (newflags & VM_WRITE) {
		if (!(oldflags & (VM_ACCOUNT | VM_WRITE | VM_SHARED | VM_NORESERVE)))
			newflags |= VM_ACCOUNT;
	} else if ((oldflags & VM_ACCOUNT) && !vma->anon_vma) {
		newflags &= ~VM_ACCOUNT;
	}
	vma = vma_modify_flags(vma, start, end, newflags, &err);
	if (err)
		return err;
	*pprev = vma;
	change_protection(vma, start, end);
	return 0;
}

int thps_mprotect(thps_proc *p, uint64_t start, uint64_t len, int prot)
{
	struct mm_struct *mm = &p->mm;
	struct thps_machine *m = mm->m;
	struct vm_area_struct *vma, *prev;
	uint64_t end, vm_prot = 0, nstart;
	int err = 0;

	/* do_mprotect_pkey's order: alignment, an empty range (whatever prot
	 * says), a range that wraps, then the protection bits; PROT_SEM is
	 * accepted and means nothing here (arch_validate_prot) */
	if (!IS_ALIGNED(start, PAGE_SIZE))
		return machine_error(m, -EINVAL, "mprotect: address %#llx not page aligned",
				     (unsigned long long)start);
	if (!len)
		return 0;
	len = PAGE_ALIGN(len);
	end = start + len;
	if (end <= start)
		return machine_error(m, -ENOMEM, "mprotect: range %#llx+%#llx wraps",
				     (unsigned long long)start, (unsigned long long)len);
	if (prot & ~(THPS_PROT_READ | THPS_PROT_WRITE | THPS_PROT_EXEC | PROT_SEM))
		return machine_error(m, -EINVAL, "mprotect: unknown protection bits %#x", prot);
	if (end > TASK_SIZE)
		return machine_error(m, -ENOMEM, "mprotect: range %#llx+%#llx outside user space",
				     (unsigned long long)start, (unsigned long long)len);
	vm_prot |= (prot & THPS_PROT_READ) ? VM_READ : 0;
	vm_prot |= (prot & THPS_PROT_WRITE) ? VM_WRITE : 0;
	vm_prot |= (prot & THPS_PROT_EXEC) ? VM_EXEC : 0;

	mm_lock(mm);
	/* the whole range must be mapped before anything changes */
	nstart = start;
	for (vma = find_vma(mm, start); nstart < end; vma = vma->vm_next) {
		if (!vma || vma->vm_start > nstart) {
			err = machine_error(m, -ENOMEM, "mprotect: %#llx is not mapped",
					    (unsigned long long)nstart);
			goto out;
		}
		nstart = vma->vm_end;
	}
	for (nstart = start; nstart < end;) {
		uint64_t tmp;

		vma = find_vma(mm, nstart);
		tmp = vma->vm_end < end ? vma->vm_end : end;
		err = mprotect_fixup(vma, &prev, nstart, tmp,
				     (vma->vm_flags & ~VM_ACCESS_FLAGS) | vm_prot);
		if (err)
			break;
		nstart = tmp;
	}
out:
	mm_unlock(mm);
	return err;
}
