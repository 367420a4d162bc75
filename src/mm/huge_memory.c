/*
 * huge_memory.c - transparent huge pages for anonymous memory and the huge
 * zero page (mirrors mm/huge_memory.c).
 *
 * Entry points: do_huge_pmd_anonymous_page and do_huge_pmd_wp_page (faults),
 * zap_huge_pmd, copy_huge_pmd, change_huge_pmd, move_huge_pmd (the huge
 * twins of zap, fork, mprotect and mremap), __split_huge_pmd, the deferred
 * split queue, and the two shrinkers.
 *
 * The huge zero page, as the 2012 series "Introduce huge zero page"
 * (Linux 3.8) made it and as Linux has kept it since:
 *
 *  - It is one 2 MiB folio of zeros, allocated lazily by the first read
 *    fault that wants it (get_huge_zero_folio).  Two faults may race to
 *    allocate it: each allocates, the first to compare-and-swap its frame
 *    number into huge_zero_pfn wins, the loser frees its copy and takes a
 *    reference on the winner's.  Every successful allocation counts
 *    thp_zero_page_alloc, the winner's and the loser's; a failed one counts
 *    thp_zero_page_alloc_failed and the fault falls back to 4 KiB pages
 *    (thp_fault_fallback).
 *  - A read fault in a THP-eligible range maps it with a PMD that is never
 *    writable and counts in nobody's Rss.  A PTE table is deposited with it,
 *    so that splitting the PMD later (into 512 PTEs of the 4 KiB zero page)
 *    needs no allocation.
 *  - A write fault on it replaces it: by a new THP, or when none can be had
 *    by a PTE table with one new page and the 4 KiB zero page elsewhere
 *    (Linux 3.8-5.7; Linux 6.13+ gets the same by splitting first), or
 *    always by splitting and copying 4 KiB (Linux 5.8-6.12).
 *  - Its lifetime is reference counted.  The counter starts at 2: one
 *    reference for the caller and one for the shrinker, which frees the page
 *    only when it holds the last one (count 1 -> 0 by compare-and-swap), so
 *    put_huge_zero_folio never sees zero.  Who holds the other references is
 *    the model knob thpsim/huge_zero_page_lifetime:
 *      refcount   (3.8-4.8) one per mapping: got on map (fault, fork), put on
 *                 zap, split and write fault;
 *      per-mm     (4.9+)    one per address space that ever mapped it, a
 *                 flag on the mm, put when the mm exits;
 *      persistent           never freed once allocated (the series at patch
 *                 9, and CONFIG_PERSISTENT_HUGE_ZERO_FOLIO).
 *
 * A real THP is mapped by one PMD and counts 512 pages of Rss and
 * AnonHugePages.  Splitting its PMD (mprotect or munmap of part of it, a
 * VMA boundary inside it, copy-on-write after fork since 5.8) maps the same
 * 512 pages by PTEs; the folio stays whole.  If part of it is then unmapped
 * it is queued for deferred split, and the deferred-split shrinker splits
 * the folio itself, freeing the pages nobody maps and mapping zero-filled
 * ones to the shared zero page (Linux 6.12+).
 */
#include "internal.h"

/* ---- the huge zero folio ---- */
/*
 * The kernel reads huge_zero_folio with READ_ONCE and relies on the
 * address dependency to see the zeroed page; C11 has no such ordering, so
 * the load acquires, pairing with get_huge_zero_folio()'s publishing
 * cmpxchg.  With a relaxed load, a thread of another process that found
 * the folio published (HZP_PERSISTENT takes no reference) read its bytes
 * with no order against the allocating thread's clearing of them
 * (ThreadSanitizer, threads_processes_fault_fork_exit_with_shrinker,
 * 2026-12-07).
 */
static struct folio *huge_zero_folio(struct thps_machine *m)
{
	uint32_t pfn = smp_load_acquire(&m->huge_zero_pfn);

	return pfn == NO_PFN ? NULL : (struct folio *)pfn_to_page(m, pfn);
}

bool get_huge_zero_folio(struct thps_machine *m, struct mm_struct *mm)
{
	struct folio *folio;
	uint32_t expected;

retry:
	if (likely(atomic_inc_not_zero(&m->huge_zero_refcount)))
		return true;
	folio = folio_alloc(m, mm, GFP_TRANSHUGE | __GFP_ZERO, HPAGE_PMD_ORDER);
	if (!folio) {
		count_vm_event(m, mm, THPS_VM_thp_zero_page_alloc_failed);
		return false;
	}
	count_vm_event(m, mm, THPS_VM_thp_zero_page_alloc);
	spin_lock(&m->huge_zero_lock);
	expected = NO_PFN;
	if (!__atomic_compare_exchange_n(&m->huge_zero_pfn, &expected,
					 (uint32_t)folio_pfn(m, folio), false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* lost the race: free ours and take a reference on theirs */
		spin_unlock(&m->huge_zero_lock);
		folio_put(m, mm, folio);
		goto retry;
	}
	SetPageHugeZero((struct page *)folio);
	/* one reference for the caller, one for the shrinker */
	atomic_set_release(&m->huge_zero_refcount, 2);
	spin_unlock(&m->huge_zero_lock);
	return true;
}

void put_huge_zero_folio(struct thps_machine *m)
{
	/* only the shrinker drops the last reference */
	BUG_ON(atomic_dec_and_test(&m->huge_zero_refcount));
}

struct folio *mm_get_huge_zero_folio(struct mm_struct *mm)
{
	struct thps_machine *m = mm->m;

	switch (KNOB(m, hzp_lifetime)) {
	case HZP_PERSISTENT:
		if (!huge_zero_folio(m) && !get_huge_zero_folio(m, mm))
			return NULL;
		break;
	case HZP_PER_MM:
		if (mm->flags & (1UL << MMF_HUGE_ZERO_FOLIO))
			break;
		if (!get_huge_zero_folio(m, mm))
			return NULL;
		mm->flags |= 1UL << MMF_HUGE_ZERO_FOLIO;
		break;
	default: /* HZP_REFCOUNT: a reference for this mapping */
		if (!get_huge_zero_folio(m, mm))
			return NULL;
	}
	return huge_zero_folio(m);
}

void mm_put_huge_zero_folio(struct mm_struct *mm)
{
	if (mm->flags & (1UL << MMF_HUGE_ZERO_FOLIO)) {
		mm->flags &= ~(1UL << MMF_HUGE_ZERO_FOLIO);
		put_huge_zero_folio(mm->m);
	}
}

void huge_zero_map_put(struct thps_machine *m)
{
	if (KNOB(m, hzp_lifetime) == HZP_REFCOUNT)
		put_huge_zero_folio(m);
}

unsigned long shrink_huge_zero_page_count(struct thps_machine *m)
{
	if (KNOB(m, hzp_lifetime) == HZP_PERSISTENT)
		return 0;
	return atomic_read(&m->huge_zero_refcount) == 1 ? HPAGE_PMD_NR : 0;
}

unsigned long shrink_huge_zero_page_scan(struct thps_machine *m)
{
	struct folio *folio = NULL;

	if (KNOB(m, hzp_lifetime) == HZP_PERSISTENT)
		return 0;
	spin_lock(&m->huge_zero_lock);
	if (atomic_cmpxchg(&m->huge_zero_refcount, 1, 0) == 1) {
		folio = huge_zero_folio(m);
		BUG_ON(!folio);
		WRITE_ONCE(m->huge_zero_pfn, NO_PFN);
	}
	spin_unlock(&m->huge_zero_lock);
	if (!folio)
		return 0;
	ClearPageHugeZero((struct page *)folio);
	folio_put(m, NULL, folio);
	return HPAGE_PMD_NR;
}

/* ---- eligibility ---- */
static bool enabled_allows(int mode, uint64_t vm_flags)
{
	return mode == THP_ALWAYS || (mode == THP_MADVISE && (vm_flags & VM_HUGEPAGE));
}

/*
 * thp_vma_allowable_orders: of the anonymous folio orders in "orders", those
 * the sysfs settings and the VMA allow (__thp_vma_allowable_orders and the
 * hugepages-<size>kB/enabled masks): a size set "always" always, "madvise"
 * in a MADV_HUGEPAGE range, "inherit" as transparent_hugepage/enabled says.
 * Before Linux 6.8 (thpsim/mthp=0) only the PMD order exists.
 */
unsigned long thp_vma_allowable_orders(struct vm_area_struct *vma, uint64_t vm_flags,
				       unsigned long orders)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	const int global = KNOB(m, enabled);
	unsigned long allowed = 0;

	if (vm_flags & VM_NOHUGEPAGE)
		return 0;
	if (mm->flags & (1UL << MMF_DISABLE_THP_COMPLETELY))
		return 0;
	if ((mm->flags & (1UL << MMF_DISABLE_THP_EXCEPT_ADVISED)) && !(vm_flags & VM_HUGEPAGE))
		return 0;
	if (!KNOB(m, mthp))
		orders &= 1UL << HPAGE_PMD_ORDER;
	for (int order = THPS_MTHP_MIN_ORDER; order <= HPAGE_PMD_ORDER; order++) {
		int mode;

		if (!(orders & (1UL << order)))
			continue;
		mode = KNOB(m, hugepages_enabled[order]);
		if (mode == THP_INHERIT)
			mode = global;
		if (enabled_allows(mode, vm_flags))
			allowed |= 1UL << order;
	}
	return allowed;
}

bool thp_vma_allowable_order(struct vm_area_struct *vma, uint64_t vm_flags, int order)
{
	return thp_vma_allowable_orders(vma, vm_flags, 1UL << order) != 0;
}

/* thp_vma_suitable_order: the naturally aligned folio of this order around
 * addr lies inside the VMA (anonymous memory has no file offset to match). */
bool thp_vma_suitable_order(const struct vm_area_struct *vma, uint64_t addr, int order)
{
	uint64_t size = PAGE_SIZE << order, start = ALIGN_DOWN(addr, size);

	return start >= vma->vm_start && start + size <= vma->vm_end;
}

unsigned long thp_vma_suitable_orders(const struct vm_area_struct *vma, uint64_t addr,
				      unsigned long orders)
{
	for (int order = THPS_MTHP_MIN_ORDER; order <= HPAGE_PMD_ORDER; order++)
		if ((orders & (1UL << order)) && !thp_vma_suitable_order(vma, addr, order))
			orders &= ~(1UL << order);
	return orders;
}

/* vma_thp_gfp_mask: may this fault's THP allocation reclaim? (defrag) */
gfp_t vma_thp_gfp_mask(struct vm_area_struct *vma)
{
	bool madvised = vma->vm_flags & VM_HUGEPAGE;

	switch (KNOB(vma->vm_mm->m, defrag)) {
	case DEFRAG_ALWAYS: /* without MADV_HUGEPAGE, no retrying */
		return GFP_TRANSHUGE | (madvised ? 0 : __GFP_NORETRY);
	case DEFRAG_DEFER_MADVISE:
	case DEFRAG_MADVISE:
		return madvised ? GFP_TRANSHUGE : GFP_TRANSHUGE_LIGHT;
	default: /* defer, never: no direct reclaim */
		return GFP_TRANSHUGE_LIGHT;
	}
}

/* ---- mapping a new THP ---- */
/* A new THP for a fault, allocated and charged; NULL is a fallback. */
static struct folio *vma_alloc_anon_folio_pmd(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;
	const gfp_t gfp = vma_thp_gfp_mask(vma);
	struct folio *folio;

	folio = folio_alloc(mm->m, mm, gfp | __GFP_ZERO, HPAGE_PMD_ORDER);
	if (folio && mem_cgroup_charge_folio(folio, mm, gfp)) {
		folio_put(mm->m, mm, folio);
		folio = NULL;
		count_vm_event(mm->m, mm, THPS_VM_thp_fault_fallback_charge);
		count_mthp_stat(mm->m, HPAGE_PMD_ORDER, THPS_MTHP_anon_fault_fallback_charge);
	}
	if (!folio) {
		count_vm_event(mm->m, mm, THPS_VM_thp_fault_fallback);
		count_mthp_stat(mm->m, HPAGE_PMD_ORDER, THPS_MTHP_anon_fault_fallback);
	}
	return folio;
}

static pmd_t mk_huge_pmd(struct thps_machine *m, struct folio *folio, pgprot_t prot)
{
	return pmd_mkhuge(pfn_pmd(folio_pfn(m, folio), prot));
}

/* map_anon_folio_pmd: the new THP replaces whatever the PMD held. */
static void map_anon_folio_pmd(struct folio *folio, pmd_t *pmd, struct vm_area_struct *vma,
			       uint64_t haddr)
{
	struct mm_struct *mm = vma->vm_mm;
	pmd_t entry = mk_huge_pmd(mm->m, folio, vma->vm_page_prot);

	entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
	folio_add_new_anon_rmap(folio, vma, haddr, true);
	set_pmd(pmd, entry);
	add_mm_counter(mm, MM_ANONPAGES, HPAGE_PMD_NR);
	count_vm_event(mm->m, mm, THPS_VM_thp_fault_alloc);
	count_mthp_stat(mm->m, HPAGE_PMD_ORDER, THPS_MTHP_anon_fault_alloc);
}

static void set_huge_zero_folio(struct page *pgtable, struct mm_struct *mm,
				struct vm_area_struct *vma, uint64_t haddr, pmd_t *pmd,
				struct folio *zero_folio)
{
	pmd_t entry = mk_huge_pmd(mm->m, zero_folio, vma->vm_page_prot);

	(void)haddr;
	entry = pmd_mkspecial(pmd_wrprotect(entry));
	set_pmd(pmd, entry);
	pgtable_trans_huge_deposit(mm, pgtable);
	mm_inc_nr_ptes(mm);
}

vm_fault_t do_huge_pmd_anonymous_page(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	uint64_t haddr = vmf->address & HPAGE_PMD_MASK;
	struct folio *folio;
	struct page *pgtable;

	if (!thp_vma_suitable_order(vma, haddr, HPAGE_PMD_ORDER))
		return VM_FAULT_FALLBACK;
	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	khugepaged_enter_vma(vma, vma->vm_flags);
	if (!(vmf->flags & FAULT_FLAG_WRITE) && KNOB(m, zero_page) && KNOB(m, use_zero_page)) {
		struct folio *zero_folio;

		pgtable = pte_alloc_one(mm);
		if (!pgtable)
			return VM_FAULT_OOM;
		zero_folio = mm_get_huge_zero_folio(mm);
		if (!zero_folio) {
			pte_free(mm, pgtable);
			count_vm_event(m, mm, THPS_VM_thp_fault_fallback);
			return VM_FAULT_FALLBACK;
		}
		set_huge_zero_folio(pgtable, mm, vma, haddr, vmf->pmd, zero_folio);
		return 0;
	}
	/* __do_huge_pmd_anonymous_page */
	folio = vma_alloc_anon_folio_pmd(vma);
	if (!folio)
		return VM_FAULT_FALLBACK;
	pgtable = pte_alloc_one(mm);
	if (!pgtable) {
		folio_put(m, mm, folio);
		return VM_FAULT_OOM;
	}
	pgtable_trans_huge_deposit(mm, pgtable);
	map_anon_folio_pmd(folio, vmf->pmd, vma, haddr);
	mm_inc_nr_ptes(mm);
	/* queued for the underused check; a THP replacing the huge zero page
	 * (do_huge_zero_wp_pmd) is not */
	deferred_split_folio(m, mm, folio, false);
	return 0;
}

/* ---- write faults on a huge PMD ---- */

/* Linux 6.13+: a new THP replaces the huge zero PMD; FALLBACK if none. */
static vm_fault_t do_huge_zero_wp_pmd(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct folio *folio = vma_alloc_anon_folio_pmd(vma);

	if (!folio)
		return VM_FAULT_FALLBACK;
	pmd_clear(vmf->pmd);
	map_anon_folio_pmd(folio, vmf->pmd, vma, vmf->address & HPAGE_PMD_MASK);
	huge_zero_map_put(vma->vm_mm->m);
	return 0;
}

/*
 * Linux 3.8-5.7 (the series' do_huge_pmd_wp_zero_page_fallback): no THP to
 * be had, so the deposited table becomes a PTE table with a new page at the
 * fault address and the 4 KiB zero page everywhere else.
 */
static vm_fault_t do_huge_pmd_wp_zero_page_fallback(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	uint64_t haddr = vmf->address & HPAGE_PMD_MASK;
	struct folio *folio;
	struct page *pgtable;
	pte_t *ptes;

	folio = folio_prealloc(mm, GFP_HIGHUSER_MOVABLE | __GFP_ZERO);
	if (!folio)
		return VM_FAULT_OOM;
	pmd_clear(vmf->pmd);
	pgtable = pgtable_trans_huge_withdraw(mm);
	ptes = page_address(m, pgtable);
	for (int i = 0; i < HPAGE_PMD_NR; i++) {
		uint64_t addr = haddr + ((uint64_t)i << PAGE_SHIFT);
		pte_t entry;

		if (addr == vmf->address) {
			entry = pfn_pte(folio_pfn(m, folio), vma->vm_page_prot);
			entry = maybe_mkwrite(pte_mkdirty(entry), vma);
			folio_add_new_anon_rmap(folio, vma, addr, false);
		} else {
			entry = pte_mkspecial(pfn_pte(m->zero_pfn, vma->vm_page_prot));
		}
		set_pte(&ptes[i], entry);
	}
	ClearPageZeroed(pgtable);
	set_pmd(vmf->pmd, __pmd(mk_table_entry(page_to_pfn(m, pgtable))));
	add_mm_counter(mm, MM_ANONPAGES, 1);
	huge_zero_map_put(m);
	return 0;
}

/*
 * Linux 3.8-5.7 copy-on-write of a shared THP: copy all of it into a new
 * THP, or when none can be had into 512 new 4 KiB pages
 * (do_huge_pmd_wp_page_fallback).
 */
static vm_fault_t do_huge_pmd_wp_copy(struct vm_fault *vmf, struct folio *old)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	uint64_t haddr = vmf->address & HPAGE_PMD_MASK;
	struct folio *folio = NULL;

	if (thp_vma_allowable_order(vma, vma->vm_flags, HPAGE_PMD_ORDER))
		folio = folio_alloc(m, mm, vma_thp_gfp_mask(vma), HPAGE_PMD_ORDER);
	/* Linux 3.8-5.7 split the PMD when the charge failed; the model
	 * copies into 4 KiB pages as for a failed allocation */
	if (folio && mem_cgroup_charge_folio(folio, mm, vma_thp_gfp_mask(vma))) {
		folio_put(m, mm, folio);
		folio = NULL;
		count_vm_event(m, mm, THPS_VM_thp_fault_fallback_charge);
	}
	if (folio) {
		for (int i = 0; i < HPAGE_PMD_NR; i++)
			copy_page_bytes(m, folio_page(folio, i), folio_page(old, i));
		pmd_clear(vmf->pmd);
		folio_remove_rmap_pmd(old, vma);
		add_mm_counter(mm, MM_ANONPAGES, -HPAGE_PMD_NR);
		map_anon_folio_pmd(folio, vmf->pmd, vma, haddr);
		folio_put(m, mm, old);
		return 0;
	}
	count_vm_event(m, mm, THPS_VM_thp_fault_fallback);
	{
		struct folio *pages[HPAGE_PMD_NR];
		struct page *pgtable;
		pte_t *ptes;

		for (int i = 0; i < HPAGE_PMD_NR; i++) {
			pages[i] = folio_prealloc(mm, GFP_HIGHUSER_MOVABLE);
			if (!pages[i]) {
				while (i--)
					folio_put(m, mm, pages[i]);
				return VM_FAULT_OOM;
			}
			copy_page_bytes(m, (struct page *)pages[i], folio_page(old, i));
		}
		pmd_clear(vmf->pmd);
		pgtable = pgtable_trans_huge_withdraw(mm);
		ptes = page_address(m, pgtable);
		for (int i = 0; i < HPAGE_PMD_NR; i++) {
			uint64_t addr = haddr + ((uint64_t)i << PAGE_SHIFT);
			pte_t entry = pfn_pte(folio_pfn(m, pages[i]), vma->vm_page_prot);

			entry = maybe_mkwrite(pte_mkdirty(entry), vma);
			folio_add_new_anon_rmap(pages[i], vma, addr, false);
			set_pte(&ptes[i], entry);
		}
		ClearPageZeroed(pgtable);
		set_pmd(vmf->pmd, __pmd(mk_table_entry(page_to_pfn(m, pgtable))));
		folio_remove_rmap_pmd(old, vma);
		folio_put(m, mm, old);
		return 0;
	}
}

vm_fault_t do_huge_pmd_wp_page(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct thps_machine *m = vma->vm_mm->m;
	pmd_t orig = vmf->orig_pmd;
	struct page *page;
	struct folio *folio;

	if (is_huge_zero_pmd(m, orig)) {
		vm_fault_t ret;

		switch (KNOB(m, hzp_wp)) {
		case HZP_WP_ALLOC_OR_PTE:
			if (thp_vma_allowable_order(vma, vma->vm_flags, HPAGE_PMD_ORDER)) {
				ret = do_huge_zero_wp_pmd(vmf);
				if (!(ret & VM_FAULT_FALLBACK))
					return ret;
			} else {
				count_vm_event(m, vma->vm_mm, THPS_VM_thp_fault_fallback);
			}
			return do_huge_pmd_wp_zero_page_fallback(vmf);
		case HZP_WP_ALLOC_OR_SPLIT:
			ret = do_huge_zero_wp_pmd(vmf);
			if (!(ret & VM_FAULT_FALLBACK))
				return ret;
			goto fallback;
		default: /* HZP_WP_SPLIT */
			goto fallback;
		}
	}
	page = pfn_to_page(m, pmd_pfn(orig));
	folio = page_folio(m, page);
	VM_BUG_ON_PAGE(!folio_test_anon(folio) || !folio_test_large(folio), m, page);
	if (PageAnonExclusive(page))
		goto reuse;
	if (folio_ref_count(folio) == 1) {
		SetPageAnonExclusive(page);
		goto reuse;
	}
	if (KNOB(m, thp_cow) == THP_COW_COPY)
		return do_huge_pmd_wp_copy(vmf, folio);
fallback:
	__split_huge_pmd(vma, vmf->pmd, vmf->address);
	return VM_FAULT_FALLBACK;
reuse:
	{
		pmd_t entry = pmd_mkyoung(orig);

		entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
		set_pmd(vmf->pmd, entry);
		return 0;
	}
}

/* ---- zap, fork, mprotect, mremap ---- */
bool zap_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	pmd_t orig = pmdp_get(pmd);
	struct page *page;

	(void)addr;
	if (!pmd_trans_huge(orig))
		return false;
	pmd_clear(pmd);
	pte_free(mm, pgtable_trans_huge_withdraw(mm));
	mm_dec_nr_ptes(mm);
	page = vm_normal_page_pmd(vma, orig);
	if (!page) {
		huge_zero_map_put(m);
		return true;
	}
	{
		struct folio *folio = page_folio(m, page);

		folio_remove_rmap_pmd(folio, vma);
		add_mm_counter(mm, MM_ANONPAGES, -HPAGE_PMD_NR);
		folio_put(m, mm, folio);
	}
	return true;
}

int copy_huge_pmd(struct mm_struct *dst_mm, struct mm_struct *src_mm, pmd_t *dst_pmd,
		  pmd_t *src_pmd, uint64_t addr, struct vm_area_struct *dst_vma,
		  struct vm_area_struct *src_vma)
{
	struct thps_machine *m = src_mm->m;
	pmd_t pmd = pmdp_get(src_pmd);
	struct page *pgtable = pte_alloc_one(dst_mm);

	(void)addr;
	if (!pgtable)
		return -ENOMEM;
	if (is_huge_zero_pmd(m, pmd)) {
		/* the page exists: this only takes a reference */
		BUG_ON(!mm_get_huge_zero_folio(dst_mm));
	} else {
		struct folio *folio = page_folio(m, vm_normal_page_pmd(src_vma, pmd));

		folio_get(folio);
		folio_dup_anon_rmap_pmd(folio, dst_vma);
		add_mm_counter(dst_mm, MM_ANONPAGES, HPAGE_PMD_NR);
	}
	mm_inc_nr_ptes(dst_mm);
	pgtable_trans_huge_deposit(dst_mm, pgtable);
	set_pmd(src_pmd, pmd_wrprotect(pmd));
	set_pmd(dst_pmd, pmd_mkold(pmd_wrprotect(pmd)));
	return 0;
}

int change_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, pgprot_t newprot,
		    bool try_writable)
{
	struct thps_machine *m = vma->vm_mm->m;
	pmd_t orig = pmdp_get(pmd), entry;

	(void)addr;
	if (!pmd_trans_huge(orig))
		return 0;
	entry = pmd_modify(orig, newprot);
	if (is_huge_zero_pmd(m, orig)) {
		/* the series' patch 5: it stays write-protected */
		entry = pmd_wrprotect(entry);
	} else if (try_writable && KNOB(m, mprotect_pmd_writable) && !pmd_protnone(entry)) {
		/* can_change_pmd_writable: only an exclusive anonymous THP */
		struct page *page = vm_normal_page_pmd(vma, entry);

		if (page && PageAnonExclusive(page))
			entry = pmd_mkwrite(entry);
	}
	set_pmd(pmd, entry);
	return 1;
}

bool move_huge_pmd(struct vm_area_struct *vma, uint64_t old_addr, uint64_t new_addr,
		   pmd_t *old_pmd, pmd_t *new_pmd)
{
	pmd_t pmd;

	(void)vma;
	(void)old_addr;
	(void)new_addr;
	if (!pmd_none(pmdp_get(new_pmd)))
		return false;
	pmd = pmdp_get(old_pmd);
	pmd_clear(old_pmd);
	/* the deposited table stays on this mm's stack: nothing to move */
	set_pmd(new_pmd, pmd);
	return true;
}

/* ---- splitting a PMD ---- */
static void __split_huge_zero_page_pmd(struct vm_area_struct *vma, uint64_t haddr, pmd_t *pmd)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	struct page *pgtable;
	pte_t *ptes;

	pmd_clear(pmd);
	pgtable = pgtable_trans_huge_withdraw(mm);
	ptes = page_address(m, pgtable);
	for (int i = 0; i < HPAGE_PMD_NR; i++)
		set_pte(&ptes[i], pte_mkspecial(pfn_pte(m->zero_pfn, vma->vm_page_prot)));
	(void)haddr;
	ClearPageZeroed(pgtable);
	set_pmd(pmd, __pmd(mk_table_entry(page_to_pfn(m, pgtable))));
	huge_zero_map_put(m);
}

void __split_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t address)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	uint64_t haddr = address & HPAGE_PMD_MASK;
	pmd_t orig = pmdp_get(pmd);
	struct page *page, *pgtable;
	struct folio *folio;
	bool write, young, dirty, anon_exclusive;
	pte_t *ptes;

	if (!pmd_trans_huge(orig))
		return;
	VM_BUG_ON_VMA(haddr < vma->vm_start || haddr + HPAGE_PMD_SIZE > vma->vm_end, vma);
	count_vm_event(m, mm, THPS_VM_thp_split_pmd);
	if (is_huge_zero_pmd(m, orig)) {
		__split_huge_zero_page_pmd(vma, haddr, pmd);
		return;
	}
	page = pfn_to_page(m, pmd_pfn(orig));
	folio = page_folio(m, page);
	write = pmd_write(orig);
	young = pmd_young(orig);
	dirty = pmd_dirty(orig);
	anon_exclusive = PageAnonExclusive(page);

	pmd_clear(pmd);
	folio_ref_add(folio, HPAGE_PMD_NR - 1);
	folio_add_anon_rmap_ptes(folio, page, HPAGE_PMD_NR, vma);
	pgtable = pgtable_trans_huge_withdraw(mm);
	ptes = page_address(m, pgtable);
	for (int i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t entry = pfn_pte(page_to_pfn(m, page + i), vma->vm_page_prot);

		if (anon_exclusive)
			SetPageAnonExclusive(page + i);
		if (write)
			entry = pte_mkwrite(entry);
		if (!young)
			entry = pte_mkold(entry);
		if (dirty)
			entry = pte_mkdirty(entry);
		set_pte(&ptes[i], entry);
	}
	ClearPageZeroed(pgtable);
	set_pmd(pmd, __pmd(mk_table_entry(page_to_pfn(m, pgtable))));
	folio_remove_rmap_pmd(folio, vma);
}

void split_huge_pmd_address(struct vm_area_struct *vma, uint64_t address)
{
	pmd_t *pmd = pmd_walk(vma->vm_mm, address);

	if (pmd && pmd_trans_huge(pmdp_get(pmd)))
		__split_huge_pmd(vma, pmd, address);
}

static void split_huge_pmd_if_needed(struct vm_area_struct *vma, uint64_t address)
{
	if (!IS_ALIGNED(address, HPAGE_PMD_SIZE) &&
	    ALIGN_DOWN(address, HPAGE_PMD_SIZE) >= vma->vm_start &&
	    ALIGN_UP(address, HPAGE_PMD_SIZE) <= vma->vm_end)
		split_huge_pmd_address(vma, address);
}

void vma_adjust_trans_huge(struct vm_area_struct *vma, uint64_t start, uint64_t end)
{
	split_huge_pmd_if_needed(vma, start);
	if (end != start)
		split_huge_pmd_if_needed(vma, end);
}

/* ---- deferred split ---- */
static struct folio *pfn_folio(struct thps_machine *m, uint32_t pfn)
{
	return (struct folio *)pfn_to_page(m, pfn);
}

void deferred_split_folio(struct thps_machine *m, struct mm_struct *mm, struct folio *folio,
			  bool partially_mapped)
{
	struct page *page1 = folio_page(folio, 1);

	if (folio_order(folio) <= 1)
		return;
	if (!partially_mapped && !(KNOB(m, underused_shrinker) && KNOB(m, shrink_underused)))
		return;
	spin_lock(&m->split_queue_lock);
	if (partially_mapped && !test_bit_flags(page1, PG_partially_mapped)) {
		set_bit_flags(page1, PG_partially_mapped);
		if (folio_test_pmd_mappable(folio))
			count_vm_event(m, mm, THPS_VM_thp_deferred_split_page);
		count_mthp_stat(m, folio_order(folio), THPS_MTHP_split_deferred);
		mod_mthp_stat(m, folio_order(folio), THPS_MTHP_nr_anon_partially_mapped, 1);
	}
	if (!test_bit_flags(page1, PG_deferred)) {
		uint32_t pfn = (uint32_t)folio_pfn(m, folio);

		set_bit_flags(page1, PG_deferred);
		folio->_deferred_list.next = NO_PFN;
		folio->_deferred_list.prev = m->split_queue_tail;
		if (m->split_queue_tail != NO_PFN)
			pfn_folio(m, m->split_queue_tail)->_deferred_list.next = pfn;
		else
			m->split_queue_head = pfn;
		m->split_queue_tail = pfn;
		/* written under split_queue_lock, read without it by
		 * deferred_split_count: a relaxed atomic store, not a plain one */
		WRITE_ONCE(m->split_queue_len, m->split_queue_len + 1);
	}
	spin_unlock(&m->split_queue_lock);
}

/* Take a folio off the queue; split_queue_lock held. */
static void split_queue_del(struct thps_machine *m, struct folio *folio)
{
	uint32_t next = folio->_deferred_list.next, prev = folio->_deferred_list.prev;

	if (prev != NO_PFN)
		pfn_folio(m, prev)->_deferred_list.next = next;
	else
		m->split_queue_head = next;
	if (next != NO_PFN)
		pfn_folio(m, next)->_deferred_list.prev = prev;
	else
		m->split_queue_tail = prev;
	folio->_deferred_list.next = folio->_deferred_list.prev = NO_PFN;
	/* last: a folio being freed that sees it clear (without the lock,
	 * folio_undo_large_rmappable) is freed after all this, and after a
	 * scan's last look at it (deferred_split_scan reads its order) */
	clear_bit_flags_release(folio_page(folio, 1), PG_deferred);
	WRITE_ONCE(m->split_queue_len, m->split_queue_len - 1);
}

/* folio_clear_partially_mapped, with its per-size count. */
static void clear_partially_mapped(struct thps_machine *m, struct folio *folio)
{
	struct page *page1 = folio_page(folio, 1);

	if (!test_bit_flags(page1, PG_partially_mapped))
		return;
	clear_bit_flags(page1, PG_partially_mapped);
	mod_mthp_stat(m, folio_order(folio), THPS_MTHP_nr_anon_partially_mapped, -1);
}

/* A large folio is being freed: off the queue it goes. */
void folio_undo_large_rmappable(struct thps_machine *m, struct folio *folio)
{
	struct page *page1 = folio_page(folio, 1);

	/* Linux looks at list_empty(&folio->_deferred_list) without the lock
	 * (data_race); here the acquire pairs with split_queue_del's release,
	 * so that the frames are not reused while a scan still reads them */
	if (folio_order(folio) <= 1 || !test_bit_flags_acquire(page1, PG_deferred))
		return;
	spin_lock(&m->split_queue_lock);
	if (test_bit_flags(page1, PG_deferred))
		split_queue_del(m, folio);
	clear_partially_mapped(m, folio);
	spin_unlock(&m->split_queue_lock);
}

unsigned long deferred_split_count(struct thps_machine *m)
{
	return (unsigned long)READ_ONCE(m->split_queue_len);
}

/*
 * thp_underused: more zero-filled subpages than khugepaged would allow.  As
 * the kernel's, it stops as soon as the answer is known either way: at
 * max_ptes_none + 1 zero subpages, or at HPAGE_PMD_NR - max_ptes_none
 * filled ones (then the rest cannot hold enough zeros).
 */
static bool thp_underused(struct thps_machine *m, struct folio *folio)
{
	int max_ptes_none = KNOB(m, max_ptes_none), num_zero = 0, num_filled = 0;

	if (max_ptes_none == HPAGE_PMD_NR - 1)
		return false;
	for (int i = 0; i < HPAGE_PMD_NR; i++) {
		if (page_bytes_zero(m, folio_page(folio, i))) {
			if (++num_zero > max_ptes_none)
				return true;
		} else if (++num_filled >= HPAGE_PMD_NR - max_ptes_none) {
			return false;
		}
	}
	return false;
}

/* unmap_folio: try_to_migrate_one records each mapper's peak Rss */
static int split_pmd_mapping(struct mm_struct *mm, struct vm_area_struct *vma, uint64_t addr,
			     bool huge, void *arg)
{
	(void)arg;
	update_hiwater_rss(mm);
	if (huge)
		__split_huge_pmd(vma, pmd_walk(mm, addr), addr);
	return 0;
}

/*
 * remap_page with RMP_USE_SHARED_ZEROPAGE: a mapped subpage that holds only
 * zeros becomes the shared zero page (try_to_map_unused_to_zeropage).  A
 * page table's part at a time, in address order; the pages that lose
 * their last reference go back to mm's cache in batches, in that order,
 * as freeing them one by one would (nothing is allocated in between).
 */
static int map_unused_to_zeropage(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pte,
				  unsigned n, uint64_t addr, const struct rmap_range *r, void *arg)
{
	struct thps_machine *m = mm->m;
	struct folio *batch[FOLIO_BATCH_MAX];
	int refs[FOLIO_BATCH_MAX], nb = 0;

	(void)addr;
	(void)arg;
	if (vma->vm_flags & VM_LOCKED)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		pte_t e = ptep_get(&pte[i]);
		struct page *page;

		if (!rmap_range_maps(r, e))
			continue;
		page = pfn_to_page(m, pte_pfn(e));
		if (!page_bytes_zero(m, page))
			continue;
		set_pte(&pte[i], pte_mkspecial(pfn_pte(m->zero_pfn, vma->vm_page_prot)));
		add_mm_counter(mm, MM_ANONPAGES, -1);
		batch[nb] = page_folio(m, page); /* split: the page's own */
		folio_remove_rmap_ptes(batch[nb], page, 1, vma);
		refs[nb++] = 1;
		if (nb == FOLIO_BATCH_MAX) {
			folios_put_refs(m, mm, batch, refs, nb);
			nb = 0;
		}
	}
	if (nb)
		folios_put_refs(m, mm, batch, refs, nb);
	return 0;
}

/* Does the mm in arg map the folio being walked, where it is busy: in
 * the 2 MiB of the fault it is in, or anywhere outside a fault? */
static int mapped_by(struct mm_struct *mm, struct vm_area_struct *vma, uint64_t addr, bool huge,
		     void *arg)
{
	(void)vma;
	(void)huge;
	if (mm != arg)
		return 0;
	return mm->fault_addr == FAULT_ADDR_NONE ||
	       (addr & HPAGE_PMD_MASK) == (mm->fault_addr & HPAGE_PMD_MASK);
}

/*
 * split_huge_page_to_list_to_order, for the deferred-split shrinker and
 * split_folio.  new_order must be 0: the anonymous paths of the kernels
 * modelled split only to order 0 (deferred_split_scan, MADV_FREE,
 * reclaim); splits to a larger order are file truncation's and debugfs's,
 * which the model does not have, so another order is -EINVAL.
 *
 * Every process's lock is taken (trylock: -EBUSY if one is busy).  A folio
 * that is not partially mapped is split only when underused (-EAGAIN
 * otherwise): that test reads its bytes, so it waits for the locks too.
 * Then every PMD mapping of the folio is split, each page becomes a folio
 * of its own holding one reference per PTE mapping, pages nobody maps are
 * freed and zero-filled ones are remapped to the zero page.  The caller's
 * extra reference stays on the head page.  explicit: the caller
 * (split_folio, for MADV_FREE) asked for this folio and expects it split.
 */
static int split_folio_to_order(struct thps_machine *m, struct folio *folio, int new_order,
				struct mm_struct *held, bool need_underused, bool explicit)
{
	struct rmap_range r = rmap_folio_range(m, folio);
	struct page *head = (struct page *)folio;
	bool queued, pinned;
	int err;

	if (new_order)
		return -EINVAL;

	err = rmap_lock_all(m, held);
	if (err)
		return err;
	/*
	 * Direct reclaim inside a fault, fork or mremap of "held": that caller
	 * may be working on this very folio, as Linux's fault path is with a
	 * reference of its own, which makes split_folio fail (can_split_folio).
	 * So a folio the reclaiming process maps is left alone, like a busy
	 * one: inside a fault, one it maps in the fault's 2 MiB (a fault works
	 * on its own PMD only); else one it maps anywhere.
	 */
	if (held && !explicit && rmap_walk_locked(m, &r, mapped_by, held)) {
		rmap_unlock_all(m, held);
		return -EBUSY;
	}
	/*
	 * can_split_folio: every reference but the caller's must be a mapping.
	 * A deferred-split scan on another thread takes references under
	 * split_queue_lock, not the process locks, so the folio leaves the
	 * queue first (no new one can come) and then its references are
	 * counted; one more than expected fails the split, as in Linux.
	 */
	spin_lock(&m->split_queue_lock);
	queued = test_bit_flags(head + 1, PG_deferred);
	if (queued)
		split_queue_del(m, folio);
	spin_unlock(&m->split_queue_lock);
	pinned = folio_ref_count(folio) != folio_mapcount(folio) + 1;
	if (pinned || (need_underused && !thp_underused(m, folio))) {
		/* can_split_folio failed: an attempt that counts as failed */
		if (pinned) {
			count_mthp_stat(m, folio_order(folio), THPS_MTHP_split_failed);
			if (folio_test_pmd_mappable(folio))
				count_vm_event(m, NULL, THPS_VM_thp_split_page_failed);
		}
		if (queued) /* back where it was; PG_partially_mapped is kept */
			deferred_split_folio(m, NULL, folio, folio_test_partially_mapped(folio));
		rmap_unlock_all(m, held);
		return -EAGAIN;
	}
	/* thpsim/deferred_split=unmap-and-split (Linux 3.8-6.1): unmapping the
	 * folio for the split removed each page's mapping, which queued it,
	 * and counted, if it was not queued yet (one the shrinker took off the
	 * queue was on its private list, so not; it is partially mapped) */
	if (!queued && !folio_test_partially_mapped(folio) &&
	    KNOB(m, deferred_split) == DEFERRED_SPLIT_UNMAP_AND_SPLIT && folio_mapcount(folio))
		count_vm_event(m, NULL, THPS_VM_thp_deferred_split_page);
	rmap_walk_locked(m, &r, split_pmd_mapping, NULL);
	VM_BUG_ON_PAGE(folio_entire_mapcount(folio), m, head);
	VM_BUG_ON_PAGE(folio_ref_count(folio) != folio_mapcount(folio) + 1, m, head);
	folio_undo_large_rmappable(m, folio); /* off the deferred-split queue */
	clear_partially_mapped(m, folio);
	mod_mthp_stat(m, folio_order(folio), THPS_MTHP_nr_anon, -1);
	count_mthp_stat(m, folio_order(folio), THPS_MTHP_split);
	if (folio_test_pmd_mappable(folio))
		count_vm_event(m, NULL, THPS_VM_thp_split_page);
	for (uint64_t i = r.nr; i-- > 0;) {
		struct page *p = head + i;
		int mapcount = atomic_read(&p->_mapcount);

		if (i) {
			ClearPageTail(p);
			p->index = r.index + i;
			SetPageAnon(p);
		} else {
			ClearPageHead(p);
		}
		p->order = 0;
		memset(p->_pad, 0, sizeof(p->_pad));
		p->lru.next = p->lru.prev = NO_PFN;
		atomic_set(&p->_refcount, mapcount + (i == 0));
		/* a page nobody maps goes back to the allocator */
		if (i && !mapcount)
			free_pages(m, NULL, p, 0);
	}
	/* Linux 6.12+.  Linux skips it where mm_forbids_zeropage (s390 KVM);
	 * a kernel booted with pvm_no_zero_page=1 still does it (observed:
	 * scenarios fork-thp-parent-cow, madv-free-hzp), so thpsim/zero_page
	 * leaves it to thpsim/split_remap_zero. */
	if (KNOB(m, split_remap_zero))
		rmap_walk_tables_locked(m, &r, map_unused_to_zeropage, NULL);
	rmap_unlock_all(m, held);
	return 0;
}

/* split_folio(): for a caller holding the lock of "held" and no extra
 * reference.  0, or -EBUSY when another process is busy. */
int split_folio(struct thps_machine *m, struct folio *folio, struct mm_struct *held)
{
	int err;

	folio_get(folio);
	err = split_folio_to_order(m, folio, 0, held, false, true);
	folio_put(m, held, folio);
	return err;
}

unsigned long deferred_split_scan(struct thps_machine *m, struct mm_struct *held,
				  unsigned long nr_to_scan)
{
	uint32_t batch[64];
	int n = 0;
	unsigned long split = 0;

	spin_lock(&m->split_queue_lock);
	while (m->split_queue_head != NO_PFN && n < (int)ARRAY_SIZE(batch) && nr_to_scan--) {
		struct folio *folio = pfn_folio(m, m->split_queue_head);

		/* folio_try_get: one being freed just leaves the queue */
		if (atomic_inc_not_zero(&folio->_refcount))
			batch[n++] = (uint32_t)folio_pfn(m, folio);
		else
			clear_partially_mapped(m, folio);
		split_queue_del(m, folio);
	}
	spin_unlock(&m->split_queue_lock);

	for (int i = 0; i < n; i++) {
		struct folio *folio = pfn_folio(m, batch[i]);
		bool partially = folio_test_partially_mapped(folio);
		bool underused = !partially && KNOB(m, underused_shrinker) &&
				 KNOB(m, max_ptes_none) != HPAGE_PMD_NR - 1;

		if ((partially || underused) &&
		    split_folio_to_order(m, folio, 0, held, underused, false) == 0) {
			if (underused)
				count_vm_event(m, NULL, THPS_VM_thp_underused_split_page);
			split++;
		} else if (partially) {
			/* still partially mapped: back on the queue */
			deferred_split_folio(m, NULL, folio, true);
		}
		/* after a split this is the head page, an order-0 folio */
		folio_put(m, NULL, folio);
	}
	return split;
}

void huge_memory_init(struct thps_machine *m)
{
	spin_lock_init(&m->huge_zero_lock);
	atomic_set(&m->huge_zero_refcount, 0);
	m->huge_zero_pfn = NO_PFN;
	spin_lock_init(&m->split_queue_lock);
	m->split_queue_head = m->split_queue_tail = NO_PFN;
	m->split_queue_len = 0;
}

void huge_memory_exit(struct thps_machine *m)
{
	spin_lock_destroy(&m->huge_zero_lock);
	spin_lock_destroy(&m->split_queue_lock);
}
