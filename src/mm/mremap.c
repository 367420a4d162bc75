/*
 * mremap.c - moving, growing and shrinking a mapping (mirrors mm/mremap.c).
 *
 * Entry point: thps_mremap.  Shrinking unmaps the tail.  Growing extends the
 * VMA in place when the space after it is free, or else (MREMAP_MAYMOVE)
 * moves it.  MREMAP_FIXED without a change of size moves every VMA of the
 * range (Linux 6.17+).  A move keeps the pages: page-table entries change address, the
 * pages and their counts do not, and the VMA keeps its linear page index
 * (vm_pgoff) so the reverse map still finds them.
 *
 * move_page_tables works a PMD at a time.  A huge PMD whose 2 MiB moves
 * whole to a 2 MiB-aligned destination moves as one entry (move_huge_pmd:
 * no split, no counter); any other huge PMD is split first and its PTEs
 * move.  A PTE table whose whole span moves to an empty aligned slot moves
 * as one entry too (move_normal_pmd).
 *
 * Every table the destination needs is allocated before anything moves, so
 * a failed allocation leaves the mapping where it was (Linux moves back
 * what it moved; the outcome is the same).
 */
#include "internal.h"

static uint64_t move_extent(uint64_t old, uint64_t old_end, uint64_t new_)
{
	uint64_t extent = pmd_addr_end(old, old_end) - old;
	uint64_t to_new = PMD_SIZE - (new_ & ~PMD_MASK);

	return extent < to_new ? extent : to_new;
}

/* Allocate every destination table the move will need. */
static int prealloc_tables(struct mm_struct *mm, uint64_t old_addr, uint64_t new_addr, uint64_t len)
{
	for (uint64_t done = 0, extent; done < len; done += extent) {
		uint64_t old = old_addr + done, new_ = new_addr + done;
		pmd_t *old_pmd = pmd_walk(mm, old), *new_pmd;
		pmd_t v;

		extent = move_extent(old, old_addr + len, new_);
		if (!old_pmd || pmd_none(v = pmdp_get(old_pmd)))
			continue;
		new_pmd = pmd_alloc_walk(mm, new_);
		if (!new_pmd)
			return -ENOMEM;
		if (extent == PMD_SIZE && pmd_none(pmdp_get(new_pmd)))
			continue; /* the entry itself will move */
		if (pmd_none(pmdp_get(new_pmd)) && __pte_alloc(mm, new_pmd))
			return -ENOMEM;
	}
	return 0;
}

static void move_ptes(struct mm_struct *mm, pmd_t *old_pmd, uint64_t old, uint64_t extent,
		      pmd_t *new_pmd, uint64_t new_)
{
	pte_t *src = pte_offset(mm->m, old_pmd, old), *dst = pte_offset(mm->m, new_pmd, new_);

	for (uint64_t i = 0; i < extent >> PAGE_SHIFT; i++) {
		pte_t pte = ptep_get(&src[i]);

		if (pte_none(pte))
			continue;
		VM_BUG_ON_MM(!pte_none(ptep_get(&dst[i])), mm);
		pte_clear(&src[i]);
		set_pte(&dst[i], pte);
	}
}

static void move_page_tables(struct vm_area_struct *vma, uint64_t old_addr, uint64_t new_addr,
			     uint64_t len)
{
	struct mm_struct *mm = vma->vm_mm;

	for (uint64_t done = 0, extent; done < len; done += extent) {
		uint64_t old = old_addr + done, new_ = new_addr + done;
		pmd_t *old_pmd = pmd_walk(mm, old), *new_pmd;
		pmd_t v;

		extent = move_extent(old, old_addr + len, new_);
		if (!old_pmd || pmd_none(v = pmdp_get(old_pmd)))
			continue;
		new_pmd = pmd_walk(mm, new_);
		VM_BUG_ON_MM(!new_pmd, mm);
		if (pmd_trans_huge(v)) {
			if (extent == HPAGE_PMD_SIZE && move_huge_pmd(vma, old, new_, old_pmd, new_pmd))
				continue;
			__split_huge_pmd(vma, old_pmd, old);
		} else if (extent == PMD_SIZE && pmd_none(pmdp_get(new_pmd))) {
			/* move_normal_pmd: the whole PTE table changes place */
			pmd_clear(old_pmd);
			set_pmd(new_pmd, v);
			continue;
		}
		if (pmd_none(pmdp_get(new_pmd)))
			BUG_ON(__pte_alloc(mm, new_pmd)); /* preallocated: cannot fail */
		move_ptes(mm, old_pmd, old, extent, new_pmd, new_);
	}
}

/* move_vma: [old_addr, +old_len) of vma moves to new_addr, as new_len. */
static int move_vma(struct vm_area_struct *vma, uint64_t old_addr, uint64_t old_len,
		    uint64_t new_len, uint64_t new_addr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct vm_area_struct *new_vma;
	int err;

	err = prealloc_tables(mm, old_addr, new_addr, old_len);
	if (err)
		return err;
	new_vma = vm_area_dup(vma);
	if (!new_vma)
		return -ENOMEM;
	new_vma->vm_start = new_addr;
	new_vma->vm_end = new_addr + new_len;
	/* copy_vma: the linear index moves with the pages once there are any
	 * (anon_vma); before that it follows the address, as for a new map */
	if (vma->anon_vma)
		new_vma->vm_pgoff = vma->vm_pgoff + ((old_addr - vma->vm_start) >> PAGE_SHIFT);
	else
		new_vma->vm_pgoff = new_addr >> PAGE_SHIFT;
	/* huge PMDs straddling the ends of the old range become PTEs first */
	vma_adjust_trans_huge(vma, old_addr, old_addr + old_len);
	move_page_tables(vma, old_addr, new_addr, old_len);
	vma_link(mm, new_vma);
	/* the old range holds nothing now; unmap it (VMA and empty tables) */
	err = do_munmap(mm, old_addr, old_len);
	BUG_ON(err && err != -ENOMEM);
	vma_merge_neighbours(new_vma);
	return err;
}

static bool range_is_free(struct mm_struct *mm, uint64_t addr, uint64_t len)
{
	struct vm_area_struct *v = find_vma(mm, addr);

	return addr + len <= TASK_SIZE && addr + len > addr && (!v || v->vm_start >= addr + len);
}

/*
 * remap_move (Linux 6.17+, "mm/mremap: permit mremap() move of multiple
 * VMAs"): MREMAP_FIXED without a change of size moves every VMA in
 * [addr, addr+len), each to new_addr plus its offset, so the gaps between
 * them stay; only where a VMA lands is the destination unmapped first.  The
 * range must start inside a VMA.  A failure leaves the VMAs before it moved.
 */
static int remap_move(struct mm_struct *mm, uint64_t addr, uint64_t len, uint64_t new_addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	uint64_t end = addr + len;

	if (!vma || vma->vm_start > addr)
		return machine_error(mm->m, -EFAULT, "mremap: %#llx is not mapped",
				     (unsigned long long)addr);
	while (vma && vma->vm_start < end) {
		uint64_t s = vma->vm_start > addr ? vma->vm_start : addr;
		uint64_t e = vma->vm_end < end ? vma->vm_end : end;
		uint64_t dst = new_addr + (s - addr);
		int err = do_munmap(mm, dst, e - s);

		if (err)
			return err;
		err = move_vma(vma_lookup(mm, s), s, e - s, e - s, dst);
		if (err)
			return err;
		vma = find_vma(mm, e);
	}
	return 0;
}

/*
 * do_mremap follows Linux 6.18: check_mremap_params (the flags, the
 * addresses, the lengths, an overlap), then check_prep_vma (the VMA at addr;
 * a change that maps new space needs the range - the shrunk range for a
 * shrink - inside that VMA), then mremap_to (MREMAP_FIXED: unmap the
 * destination, shrink, move) or mremap_at (the same size: nothing; a
 * shrink: unmap the tail, across VMAs if it must; a growth: in place, or
 * moved).
 */
static int do_mremap(struct mm_struct *mm, uint64_t addr, uint64_t old_len, uint64_t new_len,
		     int flags, uint64_t new_addr, uint64_t *out)
{
	struct thps_machine *m = mm->m;
	bool fixed = flags & THPS_MREMAP_FIXED;
	struct vm_area_struct *vma;
	int err;

	old_len = PAGE_ALIGN(old_len);
	new_len = PAGE_ALIGN(new_len);
	if (flags & ~(THPS_MREMAP_MAYMOVE | THPS_MREMAP_FIXED))
		return machine_error(m, -EINVAL, "mremap: flags %#x not modelled", flags);
	if (!IS_ALIGNED(addr, PAGE_SIZE))
		return machine_error(m, -EINVAL, "mremap: address %#llx not page aligned",
				     (unsigned long long)addr);
	if (!new_len || new_len > TASK_SIZE)
		return machine_error(m, -EINVAL, "mremap: new length %#llx",
				     (unsigned long long)new_len);
	if (fixed) {
		if (new_addr > TASK_SIZE - new_len || !IS_ALIGNED(new_addr, PAGE_SIZE))
			return machine_error(m, -EINVAL, "mremap: bad new address %#llx",
					     (unsigned long long)new_addr);
		if (!(flags & THPS_MREMAP_MAYMOVE))
			return machine_error(m, -EINVAL, "mremap: MREMAP_FIXED needs MREMAP_MAYMOVE");
		if (addr + old_len > new_addr && new_addr + new_len > addr)
			return machine_error(m, -EINVAL, "mremap: old and new ranges overlap");
		if (old_len == new_len) {
			err = remap_move(mm, addr, old_len, new_addr);
			*out = new_addr;
			return err;
		}
	}
	vma = vma_lookup(mm, addr);
	if (!vma)
		return machine_error(m, -EFAULT, "mremap: %#llx is not mapped",
				     (unsigned long long)addr);
	if (new_len > old_len || fixed) {
		/* remap_is_valid */
		if (!old_len)
			return machine_error(m, -EINVAL, "mremap: old length 0 (shared mappings only)");
		if ((new_len < old_len ? new_len : old_len) > vma->vm_end - addr)
			return machine_error(m, -EFAULT, "mremap: %#llx+%#llx is not one mapping",
					     (unsigned long long)addr, (unsigned long long)old_len);
	}
	if (fixed) {
		err = do_munmap(mm, new_addr, new_len);
		if (err)
			return err;
		if (old_len > new_len) {
			err = do_munmap(mm, addr + new_len, old_len - new_len);
			if (err)
				return err;
			old_len = new_len;
		}
		vma = vma_lookup(mm, addr);
		err = move_vma(vma, addr, old_len, new_len, new_addr);
		*out = new_addr;
		return err;
	}
	if (new_len <= old_len) {
		if (new_len < old_len) {
			err = do_munmap(mm, addr + new_len, old_len - new_len);
			if (err)
				return err;
		}
		*out = addr;
		return 0;
	}
	/* grow in place when the VMA ends with the range and room follows */
	if (addr + old_len == vma->vm_end && range_is_free(mm, vma->vm_end, new_len - old_len)) {
		mm->total_vm += (int64_t)((new_len - old_len) >> PAGE_SHIFT);
		vma->vm_end = addr + new_len;
		vma_merge_neighbours(vma);
		*out = addr;
		return 0;
	}
	if (!(flags & THPS_MREMAP_MAYMOVE))
		return machine_error(m, -ENOMEM, "mremap: no room to grow in place");
	new_addr = get_unmapped_area(mm, new_len, IS_ALIGNED(new_len, PMD_SIZE));
	if (!new_addr)
		return machine_error(m, -ENOMEM, "mremap: no room for %#llx bytes",
				     (unsigned long long)new_len);
	err = move_vma(vma, addr, old_len, new_len, new_addr);
	*out = new_addr;
	return err;
}

int thps_mremap(thps_proc *p, uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags,
		uint64_t new_addr, uint64_t *out_addr)
{
	uint64_t out = 0;
	int err;

	mm_lock(&p->mm);
	err = do_mremap(&p->mm, old_addr, old_len, new_len, flags, new_addr, &out);
	mm_unlock(&p->mm);
	if (out_addr)
		*out_addr = err ? 0 : out;
	return err;
}
