/*
 * khugepaged.c - collapsing 2 MiB of PTE-mapped anonymous memory into one
 * transparent huge page mapped by a PMD (mirrors mm/khugepaged.c).
 *
 * Entry points: madvise_collapse (MADV_COLLAPSE, Linux 6.1+), called by
 * thps_madvise for each VMA of the range; khugepaged's background scan,
 * thps_khugepaged_run, on simulated time; khugepaged_enter_vma,
 * khugepaged_fork and khugepaged_exit, which keep its list of mm slots.
 * Both share everything below them, as in Linux: a collapse_control says
 * who collapses, and hpage_collapse_scan_pmd / collapse_huge_page read the
 * khugepaged-only limits from it.
 *
 * khugepaged, as Linux runs it:
 *  - An mm gets a slot (MMF_VM_HUGEPAGE) the first time one of its VMAs
 *    becomes eligible for the scan (khugepaged_enter_vma: MADV_HUGEPAGE, a
 *    new mapping or a heap growth under enabled=always, a THP fault); a
 *    fork gives the child a slot when the parent has one (khugepaged_fork);
 *    the slot goes when the mm does (khugepaged_exit).  Slots are scanned in
 *    the order they were made.
 *  - Each wake-up (khugepaged_do_scan) moves a cursor (mm slot, address)
 *    on by pages_to_scan units of progress: one per VMA passed over, 512
 *    per 2 MiB range looked at (khugepaged_scan_mm_slot).  Past the last
 *    VMA of the last slot, full_scans counts one and the cursor goes back
 *    to the head; a wake-up stops when it comes round to the head a second
 *    time.  Then khugepaged sleeps scan_sleep_millisecs; after a failed
 *    THP allocation it sleeps alloc_sleep_millisecs inside the wake-up and
 *    tries once more, and gives up the wake-up at a second failure.
 *  - A VMA is scanned when transparent_hugepage/enabled allows it (always,
 *    or madvise with MADV_HUGEPAGE), not MADV_NOHUGEPAGE, not under
 *    PR_SET_THP_DISABLE, and it holds an aligned 2 MiB.  A 2 MiB range is
 *    collapsed under the limits MADV_COLLAPSE ignores: at most max_ptes_none
 *    none or zero-page entries, at most max_ptes_shared pages mapped by
 *    another process, and one young entry at least (the model never ages
 *    its entries: a present page is young).  The THP is allocated as
 *    khugepaged/defrag says.  pages_collapsed counts each collapse.
 *  - Time is simulated: nothing runs until thps_khugepaged_run asks for N
 *    wake-ups or N full scans; the clock is the sleeps summed.  The model
 *    has no threads of its own, so the call wants no other thread in the
 *    model (as thps_check).
 *
 * A collapse, as Linux does it:
 *  1. hpage_collapse_scan_pmd looks at the PMD: nothing mapped or no PTE
 *     table (SCAN_PMD_NULL, SCAN_PMD_NONE), already huge (SCAN_PMD_MAPPED:
 *     a THP or the huge zero page, left alone and counted a success), or a
 *     PTE table whose 512 entries it checks: none and zero-page entries
 *     count against max_ptes_none, pages mapped shared against
 *     max_ptes_shared (both khugepaged's limits only); every page must be
 *     anonymous, with no reference its mappings do not explain
 *     (is_refcount_suitable, else SCAN_PAGE_COUNT); and before Linux 6.18
 *     at least one entry must be writable (else SCAN_PAGE_RO: after fork
 *     every entry is write-protected until a write fault; a table of none
 *     and zero-page entries has none), thpsim/collapse_ro=0.  khugepaged
 *     also wants a young entry; MADV_COLLAPSE does not.
 *  2. collapse_huge_page allocates the THP: MADV_COLLAPSE may always
 *     reclaim (GFP_TRANSHUGE, whatever transparent_hugepage/defrag says),
 *     khugepaged as khugepaged/defrag says.  thp_collapse_alloc counts a
 *     success, thp_collapse_alloc_failed a failure (SCAN_ALLOC_HUGE_PAGE_FAIL).
 *     Linux drops mmap_lock around the allocation and checks everything
 *     again after (hugepage_vma_revalidate, __collapse_huge_page_isolate);
 *     the model holds the process lock throughout, but the allocation's
 *     reclaim may run the shrinkers, so it checks the entries again too.
 *  3. The PMD is cleared, each subpage gets its bytes (a copy of the page
 *     mapped there, zeros for a none or zero-page entry), the old entries
 *     are cleared and their pages unmapped and put one by one (a PTE-mapped
 *     THP is freed with its last page), and the old PTE table, now empty,
 *     becomes the table deposited with the new huge PMD: VmPTE does not
 *     change.  Rss grows by the none and zero-page entries.
 *
 * MADV_COLLAPSE (madvise_collapse): synchronous, whatever
 * transparent_hugepage/enabled says and whatever the max_ptes_* limits are,
 * but not on a VM_NOHUGEPAGE VMA or in a process with PR_SET_THP_DISABLE
 * (-EINVAL), nor on a VMA that has no aligned 2 MiB inside it.  It works on
 * the aligned 2 MiB ranges inside [start, end) of the VMA, in order; some
 * failures let it go on to the next range (the PMD-level "nothing here",
 * SCAN_PAGE_RO, SCAN_PAGE_COUNT), others stop it (an empty PMD, an
 * allocation failure).  It returns 0 when every range ended up PMD-mapped,
 * else the errno of the last failure (madvise_collapse_errno): -ENOMEM for
 * an allocation, -EAGAIN for a page with extra references, -EINVAL for the
 * rest.  madvise(2) stops at the first VMA that fails, having collapsed
 * the ranges of the VMAs before it (madvise.c).
 */
#include "internal.h"

/* mm/khugepaged.c's enum scan_result, the members the model can reach. */
enum scan_result {
	SCAN_FAIL,
	SCAN_SUCCEED,
	SCAN_PMD_NULL,       /* no PMD table above the range */
	SCAN_PMD_NONE,       /* an empty PMD entry: nothing was ever mapped */
	SCAN_PMD_MAPPED,     /* a huge PMD already */
	SCAN_EXCEED_NONE_PTE,
	SCAN_EXCEED_SHARED_PTE,
	SCAN_PAGE_RO,        /* no writable entry */
	SCAN_LACK_REFERENCED_PAGE,
	SCAN_PAGE_NULL,
	SCAN_PAGE_COUNT,     /* a reference no mapping explains */
	SCAN_PAGE_ANON,
	SCAN_VMA_CHECK,
	SCAN_ALLOC_HUGE_PAGE_FAIL,
	SCAN_CGROUP_CHARGE_FAIL,
};

/* Who collapses, and the limits that apply to it. */
struct collapse_control {
	bool is_khugepaged;  /* khugepaged's scan; false: MADV_COLLAPSE */
	int max_ptes_none;   /* khugepaged only: none and zero-page entries */
	int max_ptes_shared; /* khugepaged only: pages mapped by another mm */
};

static bool pte_none_or_zero(const struct thps_machine *m, pte_t pte)
{
	return pte_none(pte) || (pte_present(pte) && is_zero_pfn(m, pte_pfn(pte)));
}

/* is_refcount_suitable: every reference is a mapping (no swap cache here). */
static bool is_refcount_suitable(struct folio *folio)
{
	return folio_ref_count(folio) == folio_mapcount(folio);
}

/*
 * The checks of hpage_collapse_scan_pmd and __collapse_huge_page_isolate
 * over the 512 entries of the PTE table at pte: SCAN_SUCCEED or why not.
 */
static enum scan_result collapse_check_ptes(struct vm_area_struct *vma, pte_t *pte,
					    const struct collapse_control *cc)
{
	struct thps_machine *m = vma->vm_mm->m;
	int none_or_zero = 0, shared = 0, referenced = 0;
	bool writable = false;

	for (int i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t pteval = ptep_get(pte + i);
		struct page *page;
		struct folio *folio;

		if (pte_none_or_zero(m, pteval)) {
			if (cc->is_khugepaged && ++none_or_zero > cc->max_ptes_none)
				return SCAN_EXCEED_NONE_PTE;
			continue;
		}
		if (pte_write(pteval))
			writable = true;
		page = vm_normal_page(vma, pteval);
		if (unlikely(!page))
			return SCAN_PAGE_NULL;
		folio = page_folio(m, page);
		if (!folio_test_anon(folio))
			return SCAN_PAGE_ANON;
		if (folio_maybe_mapped_shared(folio) && cc->is_khugepaged &&
		    ++shared > cc->max_ptes_shared)
			return SCAN_EXCEED_SHARED_PTE;
		if (!is_refcount_suitable(folio))
			return SCAN_PAGE_COUNT;
		if (cc->is_khugepaged && pte_young(pteval))
			referenced++;
	}
	if (!writable && !KNOB(m, collapse_ro))
		return SCAN_PAGE_RO;
	if (cc->is_khugepaged && !referenced)
		return SCAN_LACK_REFERENCED_PAGE;
	return SCAN_SUCCEED;
}

/* find_pmd_or_thp_or_none */
static enum scan_result find_pmd_or_thp_or_none(struct mm_struct *mm, uint64_t address,
						pmd_t **pmdp)
{
	pmd_t pmde;

	*pmdp = pmd_walk(mm, address);
	if (!*pmdp)
		return SCAN_PMD_NULL;
	pmde = pmdp_get(*pmdp);
	if (pmd_none(pmde))
		return SCAN_PMD_NONE;
	if (pmd_trans_huge(pmde))
		return SCAN_PMD_MAPPED;
	return SCAN_SUCCEED;
}

/* alloc_charge_folio */
static enum scan_result alloc_charge_folio(struct folio **foliop, struct mm_struct *mm,
					  const struct collapse_control *cc)
{
	gfp_t gfp = GFP_TRANSHUGE;

	/* alloc_hugepage_khugepaged_gfpmask: khugepaged/defrag */
	if (cc->is_khugepaged && !KNOB(mm->m, khugepaged_defrag))
		gfp = GFP_TRANSHUGE_LIGHT;
	*foliop = folio_alloc(mm->m, mm, gfp, HPAGE_PMD_ORDER);
	if (!*foliop) {
		count_vm_event(mm->m, mm, THPS_VM_thp_collapse_alloc_failed);
		return SCAN_ALLOC_HUGE_PAGE_FAIL;
	}
	count_vm_event(mm->m, mm, THPS_VM_thp_collapse_alloc);
	if (mem_cgroup_charge_folio(*foliop, mm, gfp)) {
		folio_put(mm->m, mm, *foliop);
		*foliop = NULL;
		return SCAN_CGROUP_CHARGE_FAIL;
	}
	return SCAN_SUCCEED;
}

/*
 * __collapse_huge_page_copy and __collapse_huge_page_copy_succeeded: the
 * bytes into the new folio, then the old entries cleared and their pages
 * unmapped and put.  Before Linux 6.17 one entry at a time, so that a
 * PTE-mapped THP is partially mapped between its first entry and its last
 * (and queued for deferred split); since, a run of one folio's entries
 * at once (thpsim/collapse_pte_batch).
 */
static void collapse_huge_page_copy(struct vm_area_struct *vma, pte_t *pte, struct folio *folio)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	const bool batch = KNOB(m, collapse_pte_batch);
	int64_t filled = 0;

	for (int i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t pteval = ptep_get(pte + i);
		struct page *dst = folio_page(folio, i);

		if (pte_none_or_zero(m, pteval))
			clear_page_bytes(m, dst);
		else
			copy_page_bytes(m, dst, pfn_to_page(m, pte_pfn(pteval)));
	}
	for (int i = 0, nr; i < HPAGE_PMD_NR; i += nr) {
		pte_t pteval = ptep_get(pte + i);
		struct page *src;
		struct folio *src_folio;

		nr = 1;
		if (pte_none_or_zero(m, pteval)) {
			filled++;
			if (!pte_none(pteval))
				pte_clear(pte + i);
			continue;
		}
		src = pfn_to_page(m, pte_pfn(pteval));
		src_folio = page_folio(m, src);
		if (batch && folio_test_large(src_folio))
			nr = folio_pte_batch(m, src_folio, src, pte + i, HPAGE_PMD_NR - i);
		for (int j = 0; j < nr; j++)
			pte_clear(pte + i + j);
		folio_remove_rmap_ptes(src_folio, src, nr, vma);
		folio_put_refs(m, mm, src_folio, nr);
	}
	add_mm_counter(mm, MM_ANONPAGES, filled);
}

/* collapse_huge_page: the range [address, address + 2 MiB) of vma, whose
 * entries hpage_collapse_scan_pmd has checked, becomes one THP. */
static enum scan_result collapse_huge_page(struct mm_struct *mm, struct vm_area_struct *vma,
					   uint64_t address, const struct collapse_control *cc)
{
	struct thps_machine *m = mm->m;
	struct folio *folio;
	struct page *pgtable;
	pmd_t *pmd, _pmd, entry;
	pte_t *pte;
	enum scan_result result;

	VM_BUG_ON(address & ~HPAGE_PMD_MASK);
	result = alloc_charge_folio(&folio, mm, cc);
	if (result != SCAN_SUCCEED)
		return result;
	/* hugepage_vma_revalidate(expect_anon) and __collapse_huge_page_isolate:
	 * the allocation's reclaim ran without this mm's pages in reach, but
	 * check as Linux does after retaking the lock */
	if (!vma->anon_vma) {
		result = SCAN_PAGE_ANON;
		goto out;
	}
	result = find_pmd_or_thp_or_none(mm, address, &pmd);
	if (result != SCAN_SUCCEED)
		goto out;
	_pmd = pmdp_get(pmd);
	pte = pte_offset(m, pmd, address);
	result = collapse_check_ptes(vma, pte, cc);
	if (result != SCAN_SUCCEED)
		goto out;

	/* pmdp_collapse_flush: nobody walks the table from here on */
	pmd_clear(pmd);
	collapse_huge_page_copy(vma, pte, folio);
	pgtable = pfn_to_page(m, table_pfn(_pmd.pmd));
	VM_BUG_ON_EXPENSIVE(!page_bytes_zero_raw(m, pgtable));

	entry = pmd_mkhuge(pfn_pmd(folio_pfn(m, folio), vma->vm_page_prot));
	entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
	folio_add_new_anon_rmap(folio, vma, address, true);
	pgtable_trans_huge_deposit(mm, pgtable); /* still counted in VmPTE */
	set_pmd(pmd, entry);
	return SCAN_SUCCEED;
out:
	folio_put(m, mm, folio);
	return result;
}

/* hpage_collapse_scan_pmd */
static enum scan_result hpage_collapse_scan_pmd(struct mm_struct *mm, struct vm_area_struct *vma,
						uint64_t address, const struct collapse_control *cc)
{
	enum scan_result result;
	pmd_t *pmd;

	VM_BUG_ON(address & ~HPAGE_PMD_MASK);
	result = find_pmd_or_thp_or_none(mm, address, &pmd);
	if (result != SCAN_SUCCEED)
		return result;
	result = collapse_check_ptes(vma, pte_offset(mm->m, pmd, address), cc);
	if (result != SCAN_SUCCEED)
		return result;
	return collapse_huge_page(mm, vma, address, cc);
}

/* madvise_collapse_errno */
static int madvise_collapse_errno(enum scan_result r)
{
	switch (r) {
	case SCAN_ALLOC_HUGE_PAGE_FAIL:
		return -ENOMEM;
	case SCAN_CGROUP_CHARGE_FAIL:
	case SCAN_EXCEED_NONE_PTE:
		return -EBUSY;
	case SCAN_PAGE_COUNT: /* try again, it may work */
		return -EAGAIN;
	default:
		return -EINVAL;
	}
}

/*
 * thp_vma_allowable_order without TVA_ENFORCE_SYSFS: what MADV_COLLAPSE
 * asks of a VMA.  Not transparent_hugepage/enabled; VM_NOHUGEPAGE and
 * PR_SET_THP_DISABLE, and some aligned 2 MiB inside the VMA (the check
 * Linux makes at its end).
 */
static bool collapse_vma_allowable(struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;

	if (vma->vm_flags & VM_NOHUGEPAGE)
		return false;
	if (mm->flags & (1UL << MMF_DISABLE_THP_COMPLETELY))
		return false;
	return vma->vm_end - vma->vm_start >= HPAGE_PMD_SIZE &&
	       thp_vma_suitable_order(vma, vma->vm_end - HPAGE_PMD_SIZE, HPAGE_PMD_ORDER);
}

int madvise_collapse(struct vm_area_struct *vma, uint64_t start, uint64_t end)
{
	struct mm_struct *mm = vma->vm_mm;
	const struct collapse_control cc = { .is_khugepaged = false };
	enum scan_result last_fail = SCAN_FAIL;
	uint64_t hstart, hend, thps = 0;

	VM_BUG_ON_VMA(start < vma->vm_start || end > vma->vm_end, vma);
	if (!collapse_vma_allowable(vma))
		return -EINVAL;
	hstart = ALIGN_UP(start, HPAGE_PMD_SIZE);
	hend = ALIGN_DOWN(end, HPAGE_PMD_SIZE);
	for (uint64_t addr = hstart; addr < hend; addr += HPAGE_PMD_SIZE) {
		enum scan_result result = hpage_collapse_scan_pmd(mm, vma, addr, &cc);

		switch (result) {
		case SCAN_SUCCEED:
		case SCAN_PMD_MAPPED:
			thps++;
			break;
		/* the results after which Linux goes on to the next range */
		case SCAN_PMD_NULL:
		case SCAN_PAGE_RO:
		case SCAN_LACK_REFERENCED_PAGE:
		case SCAN_PAGE_NULL:
		case SCAN_PAGE_COUNT:
			last_fail = result;
			break;
		default:
			last_fail = result;
			goto out;
		}
	}
out:
	/* a range inside one 2 MiB that holds no aligned 2 MiB: hend < hstart,
	 * which Linux's unsigned count never equals */
	if (hend >= hstart && thps == (hend - hstart) >> HPAGE_PMD_SHIFT)
		return 0;
	return madvise_collapse_errno(last_fail);
}

/* ---- khugepaged's background scan ---- */

/* hugepage_vma_check with TVA_ENFORCE_SYSFS: may khugepaged scan vma? */
static bool khugepaged_vma_allowable(struct vm_area_struct *vma, uint64_t vm_flags)
{
	return thp_vma_allowable_order(vma, vm_flags, HPAGE_PMD_ORDER) &&
	       vma->vm_end - vma->vm_start >= HPAGE_PMD_SIZE &&
	       ALIGN_UP(vma->vm_start, HPAGE_PMD_SIZE) + HPAGE_PMD_SIZE <= vma->vm_end;
}

/* __khugepaged_enter: a slot for mm, at the tail.  mm lock held. */
static void khugepaged_enter(struct mm_struct *mm)
{
	struct thps_machine *m = mm->m;

	if (mm->flags & (1UL << MMF_VM_HUGEPAGE))
		return;
	spin_lock(&m->khugepaged_lock);
	mm->flags |= 1UL << MMF_VM_HUGEPAGE;
	mm->khugepaged_next = NULL;
	if (m->khugepaged.tail)
		m->khugepaged.tail->khugepaged_next = mm;
	else
		m->khugepaged.head = mm;
	m->khugepaged.tail = mm;
	spin_unlock(&m->khugepaged_lock);
}

void khugepaged_enter_vma(struct vm_area_struct *vma, uint64_t vm_flags)
{
	if (!(vma->vm_mm->flags & (1UL << MMF_VM_HUGEPAGE)) && khugepaged_vma_allowable(vma, vm_flags))
		khugepaged_enter(vma->vm_mm);
}

void khugepaged_fork(struct mm_struct *mm, struct mm_struct *oldmm)
{
	if (oldmm->flags & (1UL << MMF_VM_HUGEPAGE))
		khugepaged_enter(mm);
}

void khugepaged_exit(struct mm_struct *mm)
{
	struct thps_machine *m = mm->m;
	struct khugepaged_scan *ks = &m->khugepaged;
	struct mm_struct *prev = NULL;

	if (!(mm->flags & (1UL << MMF_VM_HUGEPAGE)))
		return;
	spin_lock(&m->khugepaged_lock);
	for (struct mm_struct *it = ks->head; it && it != mm; it = it->khugepaged_next)
		prev = it;
	if (prev)
		prev->khugepaged_next = mm->khugepaged_next;
	else
		ks->head = mm->khugepaged_next;
	if (ks->tail == mm)
		ks->tail = prev;
	/* the scan was in this mm: it goes on with the next (collect_mm_slot) */
	if (ks->mm_slot == mm) {
		ks->mm_slot = mm->khugepaged_next;
		ks->address = 0;
		if (!ks->mm_slot)
			ks->full_scans++;
	}
	mm->khugepaged_next = NULL;
	mm->flags &= ~(1UL << MMF_VM_HUGEPAGE);
	spin_unlock(&m->khugepaged_lock);
}

/*
 * khugepaged_scan_mm_slot: scan from the cursor until "pages" units of
 * progress are made or the mm ends; the progress made.  *result is the
 * last 2 MiB range's.
 */
static uint64_t khugepaged_scan_mm_slot(struct thps_machine *m, uint64_t pages,
					enum scan_result *result, const struct collapse_control *cc)
{
	struct khugepaged_scan *ks = &m->khugepaged;
	struct mm_struct *mm;
	struct vm_area_struct *vma = NULL;
	uint64_t progress = 0;

	spin_lock(&m->khugepaged_lock);
	if (!ks->mm_slot) {
		ks->mm_slot = ks->head;
		ks->address = 0;
	}
	mm = ks->mm_slot;
	spin_unlock(&m->khugepaged_lock);
	if (!mm)
		return 0;

	mm_lock(mm);
	if (!(mm->flags & (1UL << MMF_DISABLE_THP_COMPLETELY)))
		vma = find_vma(mm, ks->address);
	for (; vma; vma = vma->vm_next) {
		uint64_t hstart, hend;

		if (!khugepaged_vma_allowable(vma, vma->vm_flags)) {
			progress++;
			continue;
		}
		hstart = ALIGN_UP(vma->vm_start, HPAGE_PMD_SIZE);
		hend = ALIGN_DOWN(vma->vm_end, HPAGE_PMD_SIZE);
		if (ks->address > hend) {
			progress++;
			continue;
		}
		if (ks->address < hstart)
			ks->address = hstart;
		while (ks->address < hend) {
			*result = hpage_collapse_scan_pmd(mm, vma, ks->address, cc);
			if (*result == SCAN_SUCCEED)
				ks->pages_collapsed++;
			ks->address += HPAGE_PMD_SIZE;
			progress += HPAGE_PMD_NR;
			if (progress >= pages)
				goto breakouterloop;
		}
	}
breakouterloop:
	mm_unlock(mm);

	/* the mm is done: on to the next slot; past the last, a full scan */
	if (!vma) {
		spin_lock(&m->khugepaged_lock);
		ks->mm_slot = mm->khugepaged_next;
		ks->address = 0;
		if (!ks->mm_slot)
			ks->full_scans++;
		spin_unlock(&m->khugepaged_lock);
	}
	return progress;
}

/* khugepaged_do_scan: one wake-up, and the sleep after it. */
static void khugepaged_do_scan(struct thps_machine *m)
{
	const struct knobs k = knobs_read(m);
	const struct collapse_control cc = {
		.is_khugepaged = true,
		.max_ptes_none = k.max_ptes_none,
		.max_ptes_shared = k.max_ptes_shared,
	};
	struct khugepaged_scan *ks = &m->khugepaged;
	const uint64_t pages = (uint64_t)k.pages_to_scan;
	uint64_t progress = 0;
	int pass_through_head = 0;
	bool wait = true;

	ks->wakeups++;
	for (;;) {
		enum scan_result result = SCAN_FAIL;

		if (!ks->mm_slot)
			pass_through_head++;
		if (ks->head && pass_through_head < 2)
			progress += khugepaged_scan_mm_slot(m, pages - progress, &result, &cc);
		else
			progress = pages;
		if (progress >= pages)
			break;
		if (result == SCAN_ALLOC_HUGE_PAGE_FAIL) {
			if (!wait)
				break;
			wait = false;
			ks->now_ms += (uint64_t)k.alloc_sleep_millisecs; /* khugepaged_alloc_sleep */
		}
	}
	ks->pages_scanned += progress;
	ks->now_ms += (uint64_t)k.scan_sleep_millisecs; /* khugepaged_wait_work */
}

int thps_khugepaged_run(thps_machine *m, uint64_t wakeups, uint64_t full_scans)
{
	const uint64_t target = m->khugepaged.full_scans + full_scans;

	if (!wakeups && !full_scans)
		return 0;
	for (uint64_t n = 0; !wakeups || n < wakeups; n++) {
		if (full_scans && m->khugepaged.full_scans >= target)
			break;
		/* khugepaged_has_work: with no slot it sleeps until one comes */
		if (!m->khugepaged.head)
			break;
		khugepaged_do_scan(m);
	}
	return 0;
}

void thps_khugepaged_stats(thps_machine *m, struct thps_khugepaged_stats *out)
{
	spin_lock(&m->khugepaged_lock);
	out->pages_collapsed = m->khugepaged.pages_collapsed;
	out->full_scans = m->khugepaged.full_scans;
	out->pages_scanned = m->khugepaged.pages_scanned;
	out->wakeups = m->khugepaged.wakeups;
	out->now_ms = m->khugepaged.now_ms;
	out->mm_slots = 0;
	for (const struct mm_struct *mm = m->khugepaged.head; mm; mm = mm->khugepaged_next)
		out->mm_slots++;
	spin_unlock(&m->khugepaged_lock);
}
