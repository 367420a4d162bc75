/*
 * mmap.c - mmap, munmap, brk and address-space teardown (mirrors mm/mmap.c,
 * mm/vma.c's unmapping half and mm/util.c).
 *
 * Entry points: thps_mmap, thps_munmap, thps_brk (the system calls, which
 * take the process lock), do_munmap and exit_mmap (used by mremap and
 * exit).
 *
 * Only anonymous private memory is modelled; a shared or file mapping is
 * refused with -EOPNOTSUPP and a message saying so.  Addresses are chosen
 * top-down below mmap_base as Linux does, and an anonymous mapping is
 * placed on a 2 MiB boundary where thpsim/anon_thp_align says
 * (__get_unmapped_area's THP alignment: none before Linux 6.7).
 *
 * munmap splits the VMAs at the ends of the range (a huge PMD that straddles
 * an end is split first), zaps what the range maps, then frees the page
 * tables that no VMA needs any more: those wholly inside the gap between the
 * remaining neighbours (free_pgtables with floor and ceiling).
 */
#include <stdarg.h>

#include "internal.h"

#define MMAP_BASE 0x7f0000000000ULL
#define MMAP_MIN_ADDR 0x10000ULL
#define BRK_BASE 0x555555559000ULL
#define STACK_GUARD_GAP (256UL << PAGE_SHIFT) /* stack_guard_gap: 256 pages */
#define DEFAULT_STACK_RLIMIT (8ULL << 20)     /* ulimit -s 8192 */

int machine_error(struct thps_machine *m, int err, const char *fmt, ...)
{
	va_list ap;

	spin_lock(&m->err_lock);
	va_start(ap, fmt);
	vsnprintf(m->errbuf, sizeof(m->errbuf), fmt, ap);
	va_end(ap);
	spin_unlock(&m->err_lock);
	return err;
}

const char *thps_last_error(thps_machine *m)
{
	return m->errbuf;
}

/* protection_map[] of x86-64: private writable mappings are read-only in
 * their entries until a write fault (copy-on-write) makes them writable. */
pgprot_t vm_get_page_prot(uint64_t vm_flags)
{
	pteval_t v;

	if (!(vm_flags & VM_ACCESS_FLAGS))
		return (pgprot_t){ _PAGE_PROTNONE | _PAGE_ACCESSED };
	v = _PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED;
	if (!(vm_flags & VM_EXEC))
		v |= _PAGE_NX;
	if ((vm_flags & (VM_WRITE | VM_SHARED)) == (VM_WRITE | VM_SHARED))
		v |= _PAGE_RW;
	return (pgprot_t){ v };
}

void vma_set_page_prot(struct vm_area_struct *vma)
{
	vma->vm_page_prot = vm_get_page_prot(vma->vm_flags);
}

static uint64_t calc_vm_prot_bits(int prot)
{
	return ((prot & THPS_PROT_READ) ? VM_READ : 0) | ((prot & THPS_PROT_WRITE) ? VM_WRITE : 0) |
	       ((prot & THPS_PROT_EXEC) ? VM_EXEC : 0);
}

static bool range_free(struct mm_struct *mm, uint64_t addr, uint64_t len)
{
	struct vm_area_struct *v = find_vma(mm, addr);

	return addr >= MMAP_MIN_ADDR && addr <= TASK_SIZE && len <= TASK_SIZE - addr &&
	       (!v || v->vm_start >= addr + len);
}

/* Does one VMA map all of [addr, end)? */
static bool range_mapped(struct mm_struct *mm, uint64_t addr, uint64_t end)
{
	struct vm_area_struct *v = vma_lookup(mm, addr);

	return v && v->vm_end >= end;
}

/* unmapped_area_topdown: the highest gap of len bytes below mmap_base. */
static uint64_t unmapped_area_topdown(struct mm_struct *mm, uint64_t len)
{
	uint64_t high = mm->mmap_base;
	struct vm_area_struct *v = find_vma(mm, high - 1);

	/* v is the first VMA ending above high-1; walk down from below it */
	if (v && v->vm_start >= high)
		v = v->vm_prev;
	else if (!v)
		for (v = mm->mmap; v && v->vm_next; v = v->vm_next)
			;
	for (;;) {
		uint64_t gap_start = v ? v->vm_end : MMAP_MIN_ADDR;

		if (gap_start < high && high - gap_start >= len)
			return high - len;
		if (!v)
			return 0;
		if (v->vm_start < high)
			high = v->vm_start;
		v = v->vm_prev;
	}
}

/*
 * get_unmapped_area for an anonymous mapping without a hint.  A length that
 * is a multiple of 2 MiB is placed on a 2 MiB boundary as
 * __thp_get_unmapped_area does: find room for len + 2 MiB, then round the
 * start up to the boundary (or, when it is aligned already, take the top
 * 2 MiB-aligned slot).  0 when there is no room.
 */
uint64_t get_unmapped_area(struct mm_struct *mm, uint64_t len, bool thp_align)
{
	uint64_t ret, off_sub;

	if (thp_align) {
		ret = unmapped_area_topdown(mm, len + PMD_SIZE);
		if (ret) {
			off_sub = (0 - ret) & (PMD_SIZE - 1);
			return off_sub ? ret + off_sub : ret + PMD_SIZE;
		}
	}
	return unmapped_area_topdown(mm, len);
}

/* Does an anonymous mapping of len bytes get a 2 MiB-aligned address?
 * (thpsim/anon_thp_align) */
static bool anon_thp_aligned(struct thps_machine *m, uint64_t len)
{
	switch (READ_ONCE(m->knobs.anon_thp_align)) {
	case ANON_THP_ALIGN_PMD_OR_LARGER:
		return len >= PMD_SIZE;
	case ANON_THP_ALIGN_PMD_MULTIPLE:
		return IS_ALIGNED(len, PMD_SIZE);
	default:
		return false;
	}
}

/* Fault every page in, as MAP_POPULATE does (write faults when writable). */
static int populate_range(struct mm_struct *mm, uint64_t start, uint64_t end)
{
	for (uint64_t a = start; a < end; a += PAGE_SIZE) {
		struct vm_area_struct *vma = vma_lookup(mm, a);
		unsigned flags;
		vm_fault_t ret;

		if (!vma || !(vma->vm_flags & VM_ACCESS_FLAGS))
			continue;
		flags = (vma->vm_flags & VM_WRITE) ? FAULT_FLAG_WRITE : 0;
		ret = handle_mm_fault(vma, a, flags);
		if (ret & VM_FAULT_OOM)
			return -ENOMEM;
	}
	return 0;
}

static int do_mmap(struct mm_struct *mm, uint64_t addr, uint64_t len, int prot, int flags,
		   uint64_t *out)
{
	struct thps_machine *m = mm->m;
	struct vm_area_struct *vma;
	uint64_t vm_flags;
	int err;

	if (!len)
		return machine_error(m, -EINVAL, "mmap: length 0");
	if (len > TASK_SIZE)
		return machine_error(m, -ENOMEM, "mmap: length %#llx exceeds the address space",
				     (unsigned long long)len);
	len = PAGE_ALIGN(len);
	/* protection bits other than read, write and exec are ignored, as
	 * calc_vm_prot_bits does (observed: PROT_SEM and 0x80 map) */
	if ((flags & (THPS_MAP_SHARED | THPS_MAP_PRIVATE)) != THPS_MAP_PRIVATE)
		return machine_error(m, -EOPNOTSUPP,
				     "mmap: only private mappings are modelled (flags %#x)", flags);
	if (!(flags & THPS_MAP_ANONYMOUS))
		return machine_error(m, -EOPNOTSUPP,
				     "mmap: only anonymous mappings are modelled (flags %#x)", flags);
	/* Linux would map hugetlbfs pages, or lock and populate the range;
	 * mapping plain anonymous memory instead would answer wrongly */
	if (flags & THPS_MAP_HUGETLB)
		return machine_error(m, -EOPNOTSUPP, "mmap: MAP_HUGETLB (hugetlbfs) is not modelled");
	if (flags & THPS_MAP_LOCKED)
		return machine_error(m, -EOPNOTSUPP, "mmap: MAP_LOCKED (mlock) is not modelled");
	if (flags & (THPS_MAP_FIXED | THPS_MAP_FIXED_NOREPLACE)) {
		if (!IS_ALIGNED(addr, PAGE_SIZE))
			return machine_error(m, -EINVAL, "mmap: fixed address %#llx not page aligned",
					     (unsigned long long)addr);
		if (addr < MMAP_MIN_ADDR || addr + len > TASK_SIZE || addr + len < addr)
			return machine_error(m, -ENOMEM, "mmap: fixed range %#llx+%#llx outside user space",
					     (unsigned long long)addr, (unsigned long long)len);
		if ((flags & THPS_MAP_FIXED_NOREPLACE) && !range_free(mm, addr, len))
			return machine_error(m, -EEXIST, "mmap: %#llx+%#llx overlaps a mapping",
					     (unsigned long long)addr, (unsigned long long)len);
	} else {
		/* a hint below mmap_min_addr is raised to it (round_hint_to_min);
		 * x86's arch_get_unmapped_area_topdown rounds a hint down and takes
		 * it when the range is free; THP alignment only without one */
		bool thp_align;

		addr &= PAGE_MASK;
		if (addr && addr < MMAP_MIN_ADDR)
			addr = MMAP_MIN_ADDR;
		thp_align = !addr && anon_thp_aligned(m, len);
		if (!addr || !range_free(mm, addr, len))
			addr = get_unmapped_area(mm, len, thp_align);
		if (!addr)
			return machine_error(m, -ENOMEM, "mmap: no room for %#llx bytes",
					     (unsigned long long)len);
	}
	vm_flags = calc_vm_prot_bits(prot) | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC;
	if (flags & THPS_MAP_GROWSDOWN)
		vm_flags |= VM_GROWSDOWN;
	/* thpsim/map_stack_nohugepage: thread stacks do not get THPs unless
	 * madvised (observed on 6.18: VmFlags nh; on 6.1 a THP under always) */
	if ((flags & THPS_MAP_STACK) && READ_ONCE(m->knobs.map_stack_nohugepage))
		vm_flags |= VM_NOHUGEPAGE;
	vm_flags |= (flags & THPS_MAP_NORESERVE) ? VM_NORESERVE : ((prot & THPS_PROT_WRITE) ? VM_ACCOUNT : 0);

	vma = vm_area_alloc(mm);
	if (!vma)
		return -ENOMEM;
	if (flags & THPS_MAP_FIXED) {
		err = do_munmap(mm, addr, len);
		if (err) {
			vm_area_free(vma);
			return err;
		}
	}
	vma->vm_start = addr;
	vma->vm_end = addr + len;
	vma->vm_pgoff = addr >> PAGE_SHIFT;
	vma->vm_flags = vm_flags;
	vma_set_page_prot(vma);
	vma_link(mm, vma);
	vma = vma_merge_neighbours(vma);
	khugepaged_enter_vma(vma, vma->vm_flags);
	*out = addr;
	if (flags & THPS_MAP_POPULATE)
		populate_range(mm, addr, addr + len); /* failure leaves it partly populated */
	return 0;
}

int thps_mmap(thps_proc *p, uint64_t addr, uint64_t len, int prot, int flags, uint64_t *out_addr)
{
	uint64_t a = 0;
	int err;

	mm_lock(&p->mm);
	err = do_mmap(&p->mm, addr, len, prot, flags, &a);
	mm_unlock(&p->mm);
	if (out_addr)
		*out_addr = err ? 0 : a;
	return err;
}

int do_munmap(struct mm_struct *mm, uint64_t start, uint64_t len)
{
	struct thps_machine *m = mm->m;
	struct vm_area_struct *vma, *prev, *next;
	uint64_t end;
	int err;

	if (!IS_ALIGNED(start, PAGE_SIZE) || start > TASK_SIZE || len > TASK_SIZE - start)
		return machine_error(m, -EINVAL, "munmap: bad range %#llx+%#llx",
				     (unsigned long long)start, (unsigned long long)len);
	len = PAGE_ALIGN(len);
	if (!len)
		return machine_error(m, -EINVAL, "munmap: length 0");
	end = start + len;
	vma = find_vma(mm, start);
	if (!vma || vma->vm_start >= end)
		return 0;
	/* split at both ends first; on failure nothing has been unmapped */
	if (vma->vm_start < start) {
		err = split_vma(vma, start, 0);
		if (err)
			return err;
		vma = vma->vm_next;
	}
	{
		struct vm_area_struct *last = find_vma(mm, end - 1);

		if (last && last->vm_start < end && last->vm_end > end) {
			err = split_vma(last, end, 0);
			if (err)
				return err;
		}
	}
	prev = vma->vm_prev;
	update_hiwater_rss(mm);
	while (vma && vma->vm_start < end) {
		next = vma->vm_next;
		zap_page_range_vma(vma, vma->vm_start, vma->vm_end, false);
		vma_unlink(mm, vma);
		vm_area_free(vma);
		vma = next;
	}
	free_pgd_range(mm, start, end, prev ? prev->vm_end : 0, vma ? vma->vm_start : 0);
	return 0;
}

int thps_munmap(thps_proc *p, uint64_t addr, uint64_t len)
{
	int err;

	mm_lock(&p->mm);
	err = do_munmap(&p->mm, addr, len);
	mm_unlock(&p->mm);
	return err;
}

/*
 * exit_mmap: zap every VMA, then free the tables as free_pgtables does, one
 * VMA at a time up to the next one, so the walk visits the entries under
 * the VMAs rather than the whole address space.  munmap frees the tables
 * of the gaps it leaves, so nothing should lie outside every VMA; if
 * something does (VmPTE is not zero), a sweep of everything frees it.
 */
void exit_mmap(struct mm_struct *mm)
{
	struct vm_area_struct *vma;

	for (vma = mm->mmap; vma; vma = vma->vm_next)
		zap_page_range_vma(vma, vma->vm_start, vma->vm_end, false);
	if (mm->pgd != NO_PFN) { /* else a fork that failed before its first table */
		for (vma = mm->mmap; vma; vma = vma->vm_next)
			free_pgd_range(mm, vma->vm_start, vma->vm_end, 0,
				       vma->vm_next ? vma->vm_next->vm_start : 0);
		if (mm->pgtables_bytes)
			free_pgd_range(mm, 0, TASK_SIZE + PAGE_SIZE, 0, 0);
	}
	while ((vma = mm->mmap)) {
		vma_unlink(mm, vma);
		vm_area_free(vma);
	}
}

/* ---- the stack ---- */

/*
 * expand_stack: a fault below a VM_GROWSDOWN VMA grows it down to the
 * faulting page (expand_downwards), as long as the stack stays within
 * RLIMIT_STACK and keeps stack_guard_gap from the mapping below.  Returns
 * the grown VMA, or NULL: the access is then the program's SIGSEGV.
 */
struct vm_area_struct *expand_stack(struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr), *prev;
	uint64_t start = addr & PAGE_MASK;

	if (!vma || !(vma->vm_flags & VM_GROWSDOWN) || addr >= vma->vm_start ||
	    start < MMAP_MIN_ADDR)
		return NULL;
	prev = vma->vm_prev;
	if (prev && !(prev->vm_flags & VM_GROWSDOWN) && (prev->vm_flags & VM_ACCESS_FLAGS) &&
	    (prev->vm_end > start || start - prev->vm_end < STACK_GUARD_GAP))
		return NULL;
	if (prev && prev->vm_end > start)
		return NULL;
	if (vma->vm_end - start > mm->stack_rlimit)
		return NULL;
	vma_expand_down(vma, start);
	return vma;
}

int thps_set_stack_rlimit(thps_proc *p, uint64_t bytes)
{
	mm_lock(&p->mm);
	p->mm.stack_rlimit = bytes;
	mm_unlock(&p->mm);
	return 0;
}

/* ---- brk ---- */
static int do_brk(struct mm_struct *mm, uint64_t newbrk)
{
	uint64_t old = PAGE_ALIGN(mm->brk), new_ = PAGE_ALIGN(newbrk);
	struct vm_area_struct *vma, *prev;

	if (newbrk < mm->start_brk)
		return -ENOMEM;
	if (new_ == old) {
		mm->brk = newbrk;
		return 0;
	}
	if (new_ < old) {
		int err = do_munmap(mm, new_, old - new_);

		if (!err)
			mm->brk = newbrk;
		return err;
	}
	if (!range_free(mm, old, new_ - old))
		return -ENOMEM;
	prev = vma_lookup(mm, old - 1);
	if (prev && prev->vm_end == old && prev->vm_flags == (VM_READ | VM_WRITE | VM_MAYREAD |
							   VM_MAYWRITE | VM_MAYEXEC | VM_ACCOUNT)) {
		/* do_brk_flags: expand the heap VMA in place */
		mm->total_vm += (int64_t)((new_ - old) >> PAGE_SHIFT);
		prev->vm_end = new_;
		vma = vma_merge_neighbours(prev);
	} else {
		vma = vm_area_alloc(mm);
		if (!vma)
			return -ENOMEM;
		vma->vm_start = old;
		vma->vm_end = new_;
		vma->vm_pgoff = old >> PAGE_SHIFT;
		vma->vm_flags = VM_READ | VM_WRITE | VM_MAYREAD | VM_MAYWRITE | VM_MAYEXEC | VM_ACCOUNT;
		vma_set_page_prot(vma);
		vma_link(mm, vma);
		vma = vma_merge_neighbours(vma);
	}
	khugepaged_enter_vma(vma, vma->vm_flags);
	mm->brk = newbrk;
	return 0;
}

int thps_brk(thps_proc *p, uint64_t addr, uint64_t *out)
{
	struct mm_struct *mm = &p->mm;
	int err = 0;

	mm_lock(mm);
	if (addr)
		err = do_brk(mm, addr);
	if (out)
		*out = mm->brk;
	mm_unlock(mm);
	/* brk() reports failure by returning the old break, as Linux does */
	return err == -ENOMEM ? 0 : err;
}

int thps_brk_init(thps_proc *p, uint64_t start_brk, uint64_t brk)
{
	struct mm_struct *mm = &p->mm;
	int err = 0;

	mm_lock(mm);
	if (start_brk > brk || !IS_ALIGNED(start_brk, PAGE_SIZE) || start_brk < MMAP_MIN_ADDR ||
	    brk >= TASK_SIZE)
		err = machine_error(mm->m, -EINVAL, "brk_init: bad break %#llx..%#llx",
				    (unsigned long long)start_brk, (unsigned long long)brk);
	else if (PAGE_ALIGN(brk) > start_brk && !range_mapped(mm, start_brk, PAGE_ALIGN(brk)))
		err = machine_error(mm->m, -EINVAL,
				    "brk_init: the heap %#llx..%#llx is not mapped",
				    (unsigned long long)start_brk, (unsigned long long)brk);
	if (!err) {
		mm->start_brk = start_brk;
		mm->brk = brk;
	}
	mm_unlock(mm);
	return err;
}

void mmap_init_layout(struct mm_struct *mm)
{
	mm->mmap_base = MMAP_BASE;
	mm->start_brk = mm->brk = BRK_BASE;
	mm->stack_rlimit = DEFAULT_STACK_RLIMIT;
}
