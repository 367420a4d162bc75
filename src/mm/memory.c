/*
 * memory.c - page faults, zapping and fork's page-table copy at 4 KiB
 * granularity, and the dispatch to their huge twins (mirrors mm/memory.c).
 *
 * Entry points: handle_mm_fault (every fault), zap_page_range_vma (munmap,
 * MADV_DONTNEED, exit), copy_page_range (fork).
 *
 * The life of an anonymous 4 KiB page, as in Linux:
 *  - A read of a never-touched page maps the shared zero page, read-only and
 *    "special" (no struct page is counted: no Rss, no refcount).
 *  - A write to a never-touched page maps a new zeroed page, writable.
 *  - A write to a read-only mapping is copy-on-write (do_wp_page): the zero
 *    page is replaced by a new zeroed page; an anonymous page that only this
 *    mapping uses (PageAnonExclusive, or a reference count of one) is reused
 *    in place; anything else is copied.
 * fork shares every anonymous page write-protected, so the first write on
 * either side copies.  A VMA that never had an anonymous page (no anon_vma:
 * only zero pages) is not copied at all; the child faults afresh.
 *
 * Where a PMD can map a huge page, handle_mm_fault first tries the huge path
 * in huge_memory.c; VM_FAULT_FALLBACK from it means "take the PTE path".
 */
#include "internal.h"

struct page *vm_normal_page(struct vm_area_struct *vma, pte_t pte)
{
	if (pte_special(pte))
		return NULL;
	return pfn_to_page(vma->vm_mm->m, pte_pfn(pte));
}

struct page *vm_normal_page_pmd(struct vm_area_struct *vma, pmd_t pmd)
{
	if (pmd_special(pmd) || is_huge_zero_pmd(vma->vm_mm->m, pmd))
		return NULL;
	return pfn_to_page(vma->vm_mm->m, pmd_pfn(pmd));
}

static pte_t mk_pte(struct thps_machine *m, struct page *page, pgprot_t prot)
{
	return pfn_pte(page_to_pfn(m, page), prot);
}

/* ---- the PTE fault path ---- */
/* The entry a read fault maps: the shared zero page, read-only, special. */
static pte_t zero_page_pte(const struct vm_area_struct *vma)
{
	return pte_mkspecial(pfn_pte(vma->vm_mm->m->zero_pfn, vma->vm_page_prot));
}

/* Map a new anonymous folio at addr (its first page's address), every page
 * dirty and, where the VMA allows writes, writable (the caller counts them
 * in MM_ANONPAGES); a large one holds one reference per page mapped. */
static inline __attribute__((always_inline)) void
map_new_anon_page(struct vm_area_struct *vma, pte_t *pte, uint64_t addr, struct folio *folio)
{
	pte_t entry = mk_pte(vma->vm_mm->m, (struct page *)folio, vma->vm_page_prot);

	folio_add_new_anon_rmap(folio, vma, addr, false);
	entry = maybe_mkwrite(pte_mkdirty(entry), vma);
	if (!folio_test_large(folio)) {
		set_pte(pte, entry);
		return;
	}
	folio_ref_add(folio, (int)folio_nr_pages(folio) - 1);
	set_ptes(pte, entry, (int)folio_nr_pages(folio));
}

/* pte_range_none: nr entries from pte on are all none. */
static bool pte_range_none(pte_t *pte, int nr)
{
	for (int i = 0; i < nr; i++)
		if (!pte_none(ptep_get(pte + i)))
			return false;
	return true;
}

struct folio *folio_prealloc(struct mm_struct *mm, gfp_t gfp)
{
	struct folio *folio = folio_alloc(mm->m, mm, gfp, 0);

	if (folio && mem_cgroup_charge_folio(folio, mm, GFP_KERNEL)) {
		folio_put(mm->m, mm, folio);
		return NULL;
	}
	return folio;
}

/*
 * alloc_anon_folio (Linux 6.8+): the folio a fault on a none entry maps.
 * Of the orders below the PMD's that the settings allow and whose naturally
 * aligned range lies inside the VMA, the highest whose entries are all none;
 * on allocation failure the next lower one (anon_fault_fallback counts each
 * failure), and at last an order-0 page.  Zeroed, as folio_zero_user does.
 */
static struct folio *alloc_anon_folio(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	unsigned long orders = 0;

	if (KNOB(m, mthp))
		orders = thp_vma_allowable_orders(vma, vma->vm_flags, THP_ORDERS_BELOW_PMD);
	if (orders)
		orders = thp_vma_suitable_orders(vma, vmf->address, orders);
	if (orders) {
		pte_t *table = pte_offset(m, vmf->pmd, vmf->address & PMD_MASK);
		int order;

		/* drop the orders whose range holds a present entry */
		for (; orders; orders = next_order(orders, order)) {
			uint64_t start;

			order = highest_order(orders);
			start = ALIGN_DOWN(vmf->address, PAGE_SIZE << order);
			if (pte_range_none(table + ((start >> PAGE_SHIFT) & (PTRS_PER_PTE - 1)), 1 << order))
				break;
		}
		for (; orders; orders = next_order(orders, order)) {
			struct folio *folio;

			order = highest_order(orders);
			folio = folio_alloc(m, mm, vma_thp_gfp_mask(vma) | __GFP_ZERO, (unsigned)order);
			if (folio && mem_cgroup_charge_folio(folio, mm, vma_thp_gfp_mask(vma))) {
				count_mthp_stat(m, order, THPS_MTHP_anon_fault_fallback_charge);
				folio_put(m, mm, folio);
				folio = NULL;
			}
			if (folio) {
				count_mthp_stat(m, order, THPS_MTHP_anon_fault_alloc);
				return folio;
			}
			count_mthp_stat(m, order, THPS_MTHP_anon_fault_fallback);
		}
	}
	return folio_prealloc(mm, GFP_HIGHUSER_MOVABLE | __GFP_ZERO);
}

static vm_fault_t do_anonymous_page(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct folio *folio;
	uint64_t addr;
	int nr;

	/* Use the zero page for reads, unless the kernel forbids it
	 * (mm_forbids_zeropage: then a read allocates as a write does). */
	if (!(vmf->flags & FAULT_FLAG_WRITE) && KNOB(mm->m, zero_page)) {
		set_pte(vmf->pte, zero_page_pte(vma));
		return 0;
	}
	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	folio = alloc_anon_folio(vmf);
	if (!folio)
		return VM_FAULT_OOM;
	nr = (int)folio_nr_pages(folio);
	addr = ALIGN_DOWN(vmf->address, PAGE_SIZE * (uint64_t)nr);
	add_mm_counter(mm, MM_ANONPAGES, nr);
	map_new_anon_page(vma, vmf->pte - ((vmf->address - addr) >> PAGE_SHIFT), addr, folio);
	return 0;
}

/*
 * __wp_can_reuse_large_anon_folio: a PTE-mapped large folio may be reused
 * when every reference is a mapping and every mapping is this process's.
 * A folio with one page mapped is better copied (and freed).
 */
static bool wp_can_reuse_large_anon_folio(struct folio *folio)
{
	if (folio_mapcount(folio) <= 1)
		return false;
	if (folio_maybe_mapped_shared(folio))
		return false;
	return folio_mapcount(folio) == folio_ref_count(folio);
}

static bool wp_can_reuse_anon_folio(struct thps_machine *m, struct folio *folio)
{
	if (folio_test_large(folio))
		return KNOB(m, wp_reuse_large) && wp_can_reuse_large_anon_folio(folio);
	/* the only reference is our mapping's */
	return folio_ref_count(folio) == 1;
}

/* Copy-on-write into a new page: zeroed when the old one is the zero page. */
static vm_fault_t wp_page_copy(struct vm_fault *vmf, struct page *old_page)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	struct folio *new_folio;

	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	new_folio = folio_prealloc(mm, GFP_HIGHUSER_MOVABLE | (old_page ? 0 : __GFP_ZERO));
	if (!new_folio)
		return VM_FAULT_OOM;
	if (old_page)
		copy_page_bytes(m, (struct page *)new_folio, old_page);
	else
		add_mm_counter(mm, MM_ANONPAGES, 1);
	map_new_anon_page(vma, vmf->pte, vmf->address, new_folio);
	if (old_page) {
		struct folio *old_folio = page_folio(m, old_page);

		folio_remove_rmap_ptes(old_folio, old_page, 1, vma);
		folio_put(m, mm, old_folio);
	}
	return 0;
}

vm_fault_t do_wp_page(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct page *page = vm_normal_page(vma, vmf->orig_pte);

	if (page) {
		struct folio *folio = page_folio(vma->vm_mm->m, page);

		VM_BUG_ON_PAGE(!folio_test_anon(folio), vma->vm_mm->m, page);
		if (PageAnonExclusive(page) || wp_can_reuse_anon_folio(vma->vm_mm->m, folio)) {
			pte_t entry;

			if (!PageAnonExclusive(page))
				SetPageAnonExclusive(page);
			/* wp_page_reuse */
			entry = pte_mkyoung(vmf->orig_pte);
			entry = maybe_mkwrite(pte_mkdirty(entry), vma);
			set_pte(vmf->pte, entry);
			return 0;
		}
	}
	return wp_page_copy(vmf, page);
}

static vm_fault_t handle_pte_fault(struct vm_fault *vmf)
{
	struct mm_struct *mm = vmf->vma->vm_mm;
	pte_t entry;

	if (pmd_none(pmdp_get(vmf->pmd)) && __pte_alloc(mm, vmf->pmd))
		return VM_FAULT_OOM;
	vmf->pte = pte_offset(mm->m, vmf->pmd, vmf->address);
	entry = ptep_get(vmf->pte);
	vmf->orig_pte = entry;
	if (pte_none(entry))
		return do_anonymous_page(vmf);
	if ((vmf->flags & FAULT_FLAG_WRITE) && !pte_write(entry))
		return do_wp_page(vmf);
	entry = pte_mkyoung(entry);
	if (vmf->flags & FAULT_FLAG_WRITE)
		entry = pte_mkdirty(entry);
	set_pte(vmf->pte, entry);
	return 0;
}

vm_fault_t handle_mm_fault(struct vm_area_struct *vma, uint64_t address, unsigned flags)
{
	return handle_mm_fault_pmd(vma, address, flags, NULL);
}

/* __handle_mm_fault */
static vm_fault_t handle_mm_fault_raw(struct vm_area_struct *vma, uint64_t address, unsigned flags,
				      pmd_t *pmd)
{
	struct mm_struct *mm = vma->vm_mm;
	struct vm_fault vmf = {
		.vma = vma,
		.address = address & PAGE_MASK,
		.flags = flags,
	};
	vm_fault_t ret;

	count_vm_event(mm->m, mm, THPS_VM_pgfault);
	vmf.pmd = pmd ? pmd : pmd_alloc_walk(mm, address);
	if (!vmf.pmd)
		return VM_FAULT_OOM;
	VM_BUG_ON_EXPENSIVE(vmf.pmd != pmd_walk(mm, address));
	vmf.orig_pmd = pmdp_get(vmf.pmd);
	if (pmd_none(vmf.orig_pmd) && thp_vma_allowable_order(vma, vma->vm_flags, HPAGE_PMD_ORDER)) {
		ret = do_huge_pmd_anonymous_page(&vmf);
		if (!(ret & VM_FAULT_FALLBACK))
			return ret;
	} else if (pmd_trans_huge(vmf.orig_pmd)) {
		if ((flags & FAULT_FLAG_WRITE) && !pmd_write(vmf.orig_pmd)) {
			ret = do_huge_pmd_wp_page(&vmf);
			if (!(ret & VM_FAULT_FALLBACK))
				return ret;
		} else {
			/* touch_pmd: a spurious fault; just mark it young */
			pmd_t e = pmd_mkyoung(vmf.orig_pmd);

			if (flags & FAULT_FLAG_WRITE)
				e = pmd_mkdirty(e);
			set_pmd(vmf.pmd, e);
			return 0;
		}
	}
	return handle_pte_fault(&vmf);
}

/* handle_mm_fault for a caller that has walked to the PMD entry already
 * (pmd non-NULL: the PGD and PUD entries exist, so pmd_alloc_walk would
 * allocate nothing and return the same pointer).  While it runs, reclaim
 * (a charge over the cgroup's limit) leaves this fault's 2 MiB alone. */
vm_fault_t handle_mm_fault_pmd(struct vm_area_struct *vma, uint64_t address, unsigned flags,
			       pmd_t *pmd)
{
	struct mm_struct *mm = vma->vm_mm;
	vm_fault_t ret;

	mm->fault_addr = address;
	ret = handle_mm_fault_raw(vma, address, flags, pmd);
	mm->fault_addr = FAULT_ADDR_NONE;
	return ret;
}

/*
 * handle_pte_fault_run: the faults of accesses to the pages from addr to
 * end, one after the other, all in vma and in the PTE table pmd points to
 * (present, not huge), which the caller has checked the access may make.
 * The MMU's retry is the caller's; this leaves each page as the fault its
 * access takes would: handle_mm_fault's pgfault count, then what
 * handle_pte_fault does for the two faults of a first touch:
 *  - a read of a none entry maps the zero page (do_anonymous_page);
 *  - a write to a none entry, or to the zero page (do_wp_page, with no
 *    page to copy: wp_page_copy), maps a new zeroed page, as many as
 *    alloc_pages_bulk gets without reclaim; so does a read of a none
 *    entry where the kernel forbids the zero page.  This is the fault
 *    path's fast path for order-0 pages: where a multi-size THP could be
 *    mapped on a none entry (alloc_anon_folio), it leaves that fault to
 *    handle_mm_fault.
 * A fault taken page by page on one page changes nothing another page's
 * fault reads, so taking them together leaves the same tables, frames and
 * counts.  It stops at the first page that does not fault, faults in any
 * other way, or would need reclaim, for handle_mm_fault to take.  Returns
 * how many pages it faulted.
 */
#define FAULT_RUN_MAX 64 /* new pages allocated at a time */
int handle_pte_fault_run(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, uint64_t end,
			 bool write)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	pte_t *pte = pte_offset(m, pmd, addr);
	struct page *pages[FAULT_RUN_MAX];
	uint64_t max = (end - addr) >> PAGE_SHIFT;
	int n = 0, got;
	bool mthp;

	VM_BUG_ON(!pmd_present(pmdp_get(pmd)) || pmd_trans_huge(pmdp_get(pmd)));
	VM_BUG_ON(addr < vma->vm_start || end > vma->vm_end || end > pmd_addr_end(addr, end) ||
		  addr >= end);
	if (!write && KNOB(m, zero_page)) {
		const pte_t zero = zero_page_pte(vma);

		while ((uint64_t)n < max && pte_none(ptep_get(pte + n)))
			set_pte(pte + n++, zero);
		count_vm_events(m, mm, THPS_VM_pgfault, n);
		return n;
	}
	/* where a fault on a none entry may map a multi-size THP, that fault
	 * takes alloc_anon_folio; a write to the zero page copies into 4 KiB
	 * whatever the sizes, so those stay in the run */
	mthp = KNOB(m, mthp) && thp_vma_allowable_orders(vma, vma->vm_flags, THP_ORDERS_BELOW_PMD);
	if (max > FAULT_RUN_MAX)
		max = FAULT_RUN_MAX;
	while ((uint64_t)n < max) {
		pte_t e = ptep_get(pte + n);

		/* a read takes only none entries: it maps no zero page here */
		if (!pte_none(e) && (!write || pte_write(e) || vm_normal_page(vma, e)))
			break;
		if (pte_none(e) && mthp)
			break;
		n++;
	}
	if (!n || anon_vma_prepare(vma))
		return 0;
	got = alloc_pages_bulk(m, mm, GFP_HIGHUSER_MOVABLE | __GFP_ZERO, pages, n);
	if (got) {
		/* those that fit under the limit; the rest back, for
		 * handle_mm_fault to charge with reclaim */
		int charged = mem_cgroup_charge_bulk(m, pages, got);

		for (int i = got; i-- > charged;)
			free_pages(m, mm, pages[i], 0);
		got = charged;
	}
	for (int i = 0; i < got; i++)
		map_new_anon_page(vma, pte + i, addr + ((uint64_t)i << PAGE_SHIFT),
				  (struct folio *)pages[i]);
	add_mm_counter(mm, MM_ANONPAGES, got);
	count_vm_events(m, mm, THPS_VM_pgfault, got);
	return got;
}

/* ---- zap ---- */

/*
 * folio_pte_batch: how many entries from pte on (pte[0] maps page, of
 * folio) map the pages of folio that follow page, one after the other, at
 * most max.  It reads entries and changes nothing (the zap and the
 * collapse both use it).
 */
int folio_pte_batch(struct thps_machine *m, struct folio *folio, struct page *page, pte_t *pte,
		    uint64_t max)
{
	uint64_t pfn = page_to_pfn(m, page);
	uint64_t left = folio_pfn(m, folio) + (uint64_t)folio_nr_pages(folio) - pfn;
	int nr = 1;

	if (max > left)
		max = left;
	while ((uint64_t)nr < max) {
		pte_t e = ptep_get(pte + nr);

		if (!pte_present(e) || pte_special(e) || pte_pfn(e) != pfn + (uint64_t)nr)
			break;
		nr++;
	}
	return nr;
}
/*
 * The folios a zap has unmapped and the references their mappings held,
 * dropped together (Linux's mmu_gather: __tlb_remove_folio_pages gathers,
 * tlb_flush_mmu frees), at the latest when the PTE table is done.
 */
struct zap_gather {
	int n;
	struct folio *folio[FOLIO_BATCH_MAX];
	int refs[FOLIO_BATCH_MAX];
};

static void zap_gather_flush(struct mm_struct *mm, struct zap_gather *g)
{
	folios_put_refs(mm->m, mm, g->folio, g->refs, g->n);
	g->n = 0;
}

#define ZAP_PREFETCH 16
static void zap_pte_range(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, uint64_t end)
{
	struct mm_struct *mm = vma->vm_mm;
	struct thps_machine *m = mm->m;
	pte_t *pte = pte_offset(m, pmd, addr);
	struct zap_gather g = { .n = 0 };
	const int gather = m->one_at_a_time ? 1 : FOLIO_BATCH_MAX;
	int64_t rss = 0;

	for (int nr = 1; addr < end; addr += (uint64_t)nr << PAGE_SHIFT, pte += nr) {
		pte_t entry = ptep_get(pte);
		struct page *page;
		struct folio *folio;

		nr = 1;
		if ((uint64_t)ZAP_PREFETCH << PAGE_SHIFT < end - addr) {
			pte_t ahead = ptep_get(pte + ZAP_PREFETCH);

			if (pte_present(ahead))
				__builtin_prefetch(pfn_to_page(m, pte_pfn(ahead)), 1);
		}
		if (pte_none(entry))
			continue;
		pte_clear(pte);
		page = vm_normal_page(vma, entry);
		if (!page)
			continue; /* the zero page */
		folio = page_folio(m, page);
		if (folio_test_large(folio)) {
			nr = folio_pte_batch(m, folio, page, pte, (end - addr) >> PAGE_SHIFT);
			for (int i = 1; i < nr; i++)
				pte_clear(pte + i);
		}
		/* zap_present_folio_ptes: one rmap removal for the whole run, so a
		 * folio unmapped entirely is never seen partially mapped */
		rss += nr;
		folio_remove_rmap_ptes(folio, page, nr, vma);
		g.folio[g.n] = folio;
		g.refs[g.n++] = nr;
		if (g.n == gather)
			zap_gather_flush(mm, &g);
	}
	add_mm_counter(mm, MM_ANONPAGES, -rss);
	zap_gather_flush(mm, &g);
}

void zap_page_range_vma(struct vm_area_struct *vma, uint64_t start, uint64_t end, bool reclaim_pt)
{
	struct mm_struct *mm = vma->vm_mm;

	VM_BUG_ON_VMA(start < vma->vm_start || end > vma->vm_end, vma);
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
			else if (zap_huge_pmd(vma, pmd, addr))
				continue;
		}
		zap_pte_range(vma, pmd, addr, next);
		/* CONFIG_PT_RECLAIM: MADV_DONTNEED frees a table whose whole
		 * 2 MiB it zapped (reclaim_pt_is_enabled) */
		if (reclaim_pt && KNOB(mm->m, pt_reclaim) && next - addr == PMD_SIZE)
			try_to_free_pte(mm, pmd);
	}
}

/* ---- fork ---- */
static int copy_pte_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
			  pmd_t *dst_pmd, pmd_t *src_pmd, uint64_t addr, uint64_t end)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;
	struct thps_machine *m = src_mm->m;
	pte_t *src_pte, *dst_pte;

	if (pmd_none(pmdp_get(dst_pmd)) && __pte_alloc(dst_mm, dst_pmd))
		return -ENOMEM;
	src_pte = pte_offset(m, src_pmd, addr);
	dst_pte = pte_offset(m, dst_pmd, addr);
	for (; addr < end; addr += PAGE_SIZE, src_pte++, dst_pte++) {
		pte_t pte = ptep_get(src_pte);
		struct page *page;

		if (pte_none(pte))
			continue;
		page = vm_normal_page(src_vma, pte);
		if (page) {
			struct folio *folio = page_folio(m, page);

			folio_get(folio);
			folio_dup_anon_rmap_ptes(folio, page, 1, dst_vma);
			add_mm_counter(dst_mm, MM_ANONPAGES, 1);
		}
		/* a COW mapping: both sides lose write access */
		if (pte_write(pte)) {
			set_pte(src_pte, pte_wrprotect(pte));
			pte = pte_wrprotect(pte);
		}
		set_pte(dst_pte, pte_mkold(pte));
	}
	return 0;
}

int copy_page_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;

	/* vma_needs_copy: without an anon_vma there is nothing a fault would
	 * not recreate (zero pages only) */
	if (!src_vma->anon_vma)
		return 0;
	for (uint64_t addr = src_vma->vm_start, next; addr < src_vma->vm_end; addr = next) {
		pmd_t *src_pmd = pmd_walk(src_mm, addr), *dst_pmd;
		int err;

		next = pmd_addr_end(addr, src_vma->vm_end);
		if (!src_pmd || pmd_none(pmdp_get(src_pmd)))
			continue;
		dst_pmd = pmd_alloc_walk(dst_mm, addr);
		if (!dst_pmd)
			return -ENOMEM;
		if (pmd_trans_huge(pmdp_get(src_pmd))) {
			VM_BUG_ON(next - addr != HPAGE_PMD_SIZE);
			err = copy_huge_pmd(dst_mm, src_mm, dst_pmd, src_pmd, addr, dst_vma, src_vma);
			if (err)
				return err;
			continue;
		}
		err = copy_pte_range(dst_vma, src_vma, dst_pmd, src_pmd, addr, next);
		if (err)
			return err;
	}
	return 0;
}
