/*
 * fault.c - the simulated CPU's memory accesses: the hardware page walk and
 * the user fault entry (mirrors arch/x86/mm/fault.c's do_user_addr_fault).
 *
 * Entry points: thps_read, thps_write, thps_touch.
 *
 * An access walks the four levels as the MMU does, needing the present bit
 * (and the writable bit for a write) at the leaf, a 4 KiB PTE or a 2 MiB
 * PMD; it sets the accessed bit, and the dirty bit on a write.  A walk that
 * fails is a page fault: the VMA must exist and allow the access (else the
 * program's SIGSEGV: -EFAULT), then handle_mm_fault fixes the tables and
 * the access is retried.  Bytes are read from and written to the frames, so
 * a read returns what was written, and a write can never reach the zero
 * page or the huge zero page (they are never mapped writable).  A fault
 * just below a stack (VM_GROWSDOWN) VMA grows it first (expand_stack).
 */
#include "internal.h"

/*
 * The MMU's paging-structure cache, for the accesses of one locked call
 * (one thps_touch run, one thps_read or thps_write): where the PMD entry
 * of the last 2 MiB walked lives, so the next access in it starts at that
 * entry instead of the PGD.  Only the entry's location is kept; its value
 * is read afresh on every access, so a fault that allocates a PTE table,
 * installs a huge page or splits one is seen at once.  The location stays
 * right because page-table pages above the PTE level are freed only by
 * munmap and exit (free_pgtables), which need the lock the call holds.
 */
struct walk_cache {
	uint64_t base; /* the 2 MiB the entry maps; WALK_NONE when empty */
	pmd_t *pmd;
};
#define WALK_NONE 1 /* no PMD-aligned address */

/* The PMD entry for addr, or NULL while a PGD or PUD entry is missing:
 * the walk from the top (pmd_walk: an upper entry is none or a present
 * table), once per 2 MiB, kept out of line so that the common case, a hit,
 * costs a compare. */
static __attribute__((noinline)) pmd_t *walk_pmd_slow(struct mm_struct *mm, uint64_t addr,
						      struct walk_cache *wc)
{
	pmd_t *pmd = pmd_walk(mm, addr);

	if (pmd) {
		wc->base = addr & PMD_MASK;
		wc->pmd = pmd;
	}
	return pmd;
}

static inline pmd_t *walk_pmd(struct mm_struct *mm, uint64_t addr, struct walk_cache *wc)
{
	if (likely((addr & PMD_MASK) == wc->base))
		return wc->pmd;
	return walk_pmd_slow(mm, addr, wc);
}

/* The bits an access sets in the leaf entry that maps it: accessed, and
 * dirty on a write. */
static inline pteval_t access_bits(bool write)
{
	return _PAGE_ACCESSED | (write ? _PAGE_DIRTY : 0);
}

/* Set them in the leaf entry (its value v) unless they are set already. */
static inline void leaf_mark(pteval_t *entry, pteval_t v, pteval_t set)
{
	if ((v & set) != set)
		WRITE_ONCE(*entry, v | set);
}

/* The MMU from the PMD level down: translate addr or return NULL (a
 * fault), needing the present bit (and the writable bit for a write) at
 * the leaf and setting the accessed (and dirty) bit.  *frame gets the
 * 4 KiB frame the byte lives in. */
static inline __attribute__((always_inline)) uint8_t *
mmu_walk(struct thps_machine *m, pmd_t *pmd, uint64_t addr, bool write, struct page **frame)
{
	const pteval_t need = _PAGE_PRESENT | (write ? _PAGE_RW : 0);
	const pteval_t set = access_bits(write);
	pte_t *pte;
	pteval_t v;
	uint64_t pfn;

	v = READ_ONCE(pmd->pmd);
	if (!(v & _PAGE_PRESENT))
		return NULL;
	if (v & _PAGE_PSE) {
		if ((v & need) != need)
			return NULL;
		leaf_mark(&pmd->pmd, v, set);
		pfn = ((v & PTE_PFN_MASK) >> PAGE_SHIFT) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	} else {
		pte = pte_offset(m, pmd, addr);
		v = READ_ONCE(pte->pte);
		if ((v & need) != need)
			return NULL;
		leaf_mark(&pte->pte, v, set);
		pfn = (v & PTE_PFN_MASK) >> PAGE_SHIFT;
	}
	*frame = pfn_to_page(m, pfn);
	return (uint8_t *)pfn_address(m, pfn) + (addr & (PAGE_SIZE - 1));
}

/* access_error(): does the VMA allow this access at all? */
static bool access_error(const struct vm_area_struct *vma, bool write)
{
	if (write)
		return !(vma->vm_flags & VM_WRITE);
	return !(vma->vm_flags & VM_ACCESS_FLAGS);
}

/* What an access that hits does to the frame it writes. */
static inline __attribute__((always_inline)) void
access_frame(struct thps_machine *m, struct page *frame, bool write, bool symbolic)
{
	if (!write)
		return;
	VM_BUG_ON_PAGE(PageReserved(frame) || is_huge_zero_pfn(m, folio_pfn(m, page_folio(m, frame))),
		       m, frame);
	if (!symbolic)
		page_bytes_dirtied(frame);
	else
		page_bytes_symbolic(frame);
}

/*
 * A fault in a run of accesses to consecutive pages (up to run_end) that
 * the touch loop makes: the faults of the pages that follow in the same
 * PTE table and VMA are taken with this one (handle_pte_fault_run).  How
 * many pages from addr's it faulted, 0 when it took none.
 */
static int fault_run(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, uint64_t run_end,
		     bool write)
{
	pmd_t v = pmdp_get(pmd);
	uint64_t end;
	int n;

	if (!pmd_present(v) || pmd_trans_huge(v) || unlikely(vma->vm_mm->m->one_at_a_time))
		return 0;
	end = pmd_addr_end(addr, run_end < vma->vm_end ? run_end : vma->vm_end);
	n = handle_pte_fault_run(vma, pmd, addr & PAGE_MASK, end, write);
	local_add(&vma->vm_mm->fault_run_pages, n);
	return n;
}

/*
 * The accesses to the n pages from addr's that a fault run has just
 * mapped, for an access that neither reads nor stores a byte: the MMU's
 * retry of each finds the entry its fault left, sets the accessed (and
 * dirty) bit, and the write marks the frame, as mmu_walk and access_page
 * would, without walking again.
 */
static void access_run(struct thps_machine *m, pmd_t *pmd, uint64_t addr, int n, bool write,
		       bool symbolic)
{
	const pteval_t set = access_bits(write);
	pte_t *pte = pte_offset(m, pmd, addr);

	for (int i = 0; i < n; i++) {
		pteval_t v = READ_ONCE(pte[i].pte);

		VM_BUG_ON(!(v & _PAGE_PRESENT) || (write && !(v & _PAGE_RW)));
		leaf_mark(&pte[i].pte, v, set);
		access_frame(m, pfn_to_page(m, (v & PTE_PFN_MASK) >> PAGE_SHIFT), write, symbolic);
	}
}

/* Translate, faulting as needed: 0 with *host set, or a negative errno.
 * With "symbolic", a write marks the frame as holding data instead of
 * letting the caller store a byte.  Inlined into both callers' loops: an
 * access that hits is a few dozen instructions, and the call and its
 * setup were a good part of them.
 * A touch loop's access passes the end of its page after page run
 * (run_end, else 0) and, when the access reads and stores no byte
 * ("bare"), gets in *ran the number of pages from addr's whose accesses a
 * fault run has made too, *host then unset. */
static inline __attribute__((always_inline)) int
access_page(struct mm_struct *mm, uint64_t addr, bool write, bool symbolic, uint8_t **host,
	    struct walk_cache *wc, uint64_t run_end, bool bare, int *ran)
{
	struct thps_machine *m = mm->m;
	struct page *frame;

	if (addr >= TASK_SIZE)
		return -EFAULT;
	for (int tries = 0;; tries++) {
		struct vm_area_struct *vma;
		pmd_t *pmd = walk_pmd(mm, addr, wc);
		vm_fault_t ret;
		int n;

		*host = pmd ? mmu_walk(m, pmd, addr, write, &frame) : NULL;
		if (*host) {
			access_frame(m, frame, write, symbolic);
			return 0;
		}
		BUG_ON(tries > 2);
		vma = vma_lookup(mm, addr);
		if (!vma)
			vma = expand_stack(mm, addr);
		if (!vma || access_error(vma, write))
			return -EFAULT;
		if (run_end && pmd && (n = fault_run(vma, pmd, addr, run_end, write)) > 0) {
			if (!bare)
				continue;
			access_run(m, pmd, addr, n, write, symbolic);
			*ran = n;
			return 0;
		}
		ret = handle_mm_fault_pmd(vma, addr, (write ? FAULT_FLAG_WRITE : 0) | FAULT_FLAG_USER,
					  pmd);
		if (ret & VM_FAULT_OOM)
			return mm_flag_test(mm, MMF_OOM_VICTIM) ? -EINTR : -ENOMEM;
		if (ret & VM_FAULT_SIGSEGV)
			return -EFAULT;
	}
}

static int access_range(thps_proc *p, uint64_t addr, void *buf, size_t len, bool write)
{
	struct mm_struct *mm = &p->mm;
	uint8_t *b = buf;
	struct walk_cache wc = { .base = WALK_NONE };
	int err = 0;

	if (addr + len < addr)
		return -EFAULT;
	if (thps_proc_oom_killed(p))
		return -EINTR;
	mm_lock(mm);
	while (len) {
		uint64_t chunk = PAGE_SIZE - (addr & (PAGE_SIZE - 1));
		uint8_t *host;

		if (chunk > len)
			chunk = len;
		err = access_page(mm, addr, write, false, &host, &wc, 0, false, NULL);
		if (err)
			break;
		if (write)
			memcpy(host, b, chunk);
		else
			memcpy(b, host, chunk);
		addr += chunk;
		b += chunk;
		len -= chunk;
	}
	mm_unlock(mm);
	return err;
}

int thps_read(thps_proc *p, uint64_t addr, void *buf, size_t len)
{
	return access_range(p, addr, buf, len, false);
}

int thps_write(thps_proc *p, uint64_t addr, const void *buf, size_t len)
{
	return access_range(p, addr, (void *)buf, len, true);
}

/*
 * One touch loop per kind of access, so that the walk and the fault entry
 * are compiled with "write" and "symbolic" known (the replay spends most of
 * its time here).  Returns 0 or the access's error; *n gets the number of
 * accesses that succeeded.
 */
static inline __attribute__((always_inline)) int
touch_loop(struct mm_struct *mm, const struct thps_touch *t, bool write, bool symbolic,
	   uint64_t *n, uint64_t *mismatches)
{
	const uint64_t step = t->step, end = t->addr + t->len;
	const uint8_t value = t->value;
	const bool check = t->check;
	const bool bare = !check && (!write || symbolic); /* no byte read or stored */
	struct walk_cache wc = { .base = WALK_NONE };
	uint64_t done = 0, run_end = 0;
	int err = 0;

	/* a page after page run: faults may be taken a table at a time, up
	 * to the page of the last access */
	if (step == PAGE_SIZE && t->len) {
		uint64_t last = t->addr + ((t->len - 1) & PAGE_MASK);

		run_end = last >= TASK_SIZE ? TASK_SIZE : (last & PAGE_MASK) + PAGE_SIZE;
	}
	for (uint64_t addr = t->addr; addr < end; addr += step) {
		uint8_t *host;
		int ran = 0;

		err = access_page(mm, addr, write, symbolic, &host, &wc, run_end, bare, &ran);
		if (err)
			break;
		if (ran) {
			/* up to run_end, far below the top of the address space */
			done += (uint64_t)ran;
			addr += (uint64_t)(ran - 1) * step;
			continue;
		}
		if (write && !symbolic)
			*host = value;
		else if (check && *host != value)
			(*mismatches)++;
		done++;
		if (addr + step < addr)
			break;
	}
	*n = done;
	return err;
}

int thps_touch(thps_proc *p, struct thps_touch *t)
{
	struct mm_struct *mm = &p->mm;
	uint64_t n, mismatches = 0;
	int err;

	t->mismatches = 0;
	t->done = 0;
	if (!t->step || t->addr + t->len < t->addr)
		return -EINVAL;
	if (thps_proc_oom_killed(p))
		return -EINTR;
	mm_lock(mm);
	if (t->op == THPS_TOUCH_READ)
		err = touch_loop(mm, t, false, false, &n, &mismatches);
	else if (t->op == THPS_TOUCH_DIRTY)
		err = touch_loop(mm, t, true, true, &n, &mismatches);
	else
		err = touch_loop(mm, t, true, false, &n, &mismatches);
	mm_unlock(mm);
	/* bytes up to and including the last access that succeeded */
	t->done = n ? (n - 1) * t->step + 1 : 0;
	t->mismatches = mismatches;
	return err;
}
