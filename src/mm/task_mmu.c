/*
 * task_mmu.c - per-process figures as /proc/PID/smaps_rollup and
 * /proc/PID/status show them, /proc/PID/pagemap for one address, and
 * /proc/PID/maps (mirrors fs/proc/task_mmu.c).
 *
 * smaps_rollup walks the page tables: Rss counts pages mapped (a huge PMD
 * 2048 kB), Pss shares each page among its mappers, Anonymous counts
 * anonymous pages and AnonHugePages those mapped by a PMD.  The shared zero
 * page and the huge zero page have no struct page to count
 * (vm_normal_page*() returns NULL), so they are in nobody's Rss.
 *
 * status reads counters instead of walking: VmRSS and RssAnon from the
 * process's MM_ANONPAGES, VmHWM its peak, VmPTE its page-table bytes.
 * thps_proc_usage, for time series, takes Rss from the counters and walks
 * the PMDs only for AnonHugePages.
 */
#include "internal.h"

#define PSS_SHIFT 12

struct mem_size_stats {
	uint64_t resident, anonymous, anonymous_thp;
	uint64_t shared_clean, shared_dirty, private_clean, private_dirty;
	uint64_t pss, pss_anon; /* << PSS_SHIFT */
};

static void smaps_page_accumulate(struct mem_size_stats *mss, uint64_t size, uint64_t pss,
				  bool dirty, bool private_)
{
	mss->pss += pss;
	mss->pss_anon += pss;
	if (private_) {
		if (dirty)
			mss->private_dirty += size;
		else
			mss->private_clean += size;
	} else {
		if (dirty)
			mss->shared_dirty += size;
		else
			mss->shared_clean += size;
	}
}

/* smaps_account: size bytes of page's folio mapped here (a PMD: the folio). */
static void smaps_account(struct thps_machine *m, struct mem_size_stats *mss, struct page *page,
			  bool compound, bool dirty)
{
	struct folio *folio = page_folio(m, page);
	uint64_t nr = compound ? (uint64_t)folio_nr_pages(folio) : 1, size = nr << PAGE_SHIFT;

	mss->resident += size;
	mss->anonymous += size;
	/* a folio with one reference is exclusively ours */
	if (folio_ref_count(folio) == 1) {
		smaps_page_accumulate(mss, size, size << PSS_SHIFT, dirty, true);
		return;
	}
	for (uint64_t i = 0; i < nr; i++, page++) {
		int mapcount = atomic_read(&page->_mapcount);
		uint64_t pss = PAGE_SIZE << PSS_SHIFT;

		if (folio_test_large(folio))
			mapcount += folio_entire_mapcount(folio);
		if (mapcount >= 2)
			pss /= (uint64_t)mapcount;
		smaps_page_accumulate(mss, PAGE_SIZE, pss, dirty, mapcount < 2);
	}
}

static int smaps_pmd_entry(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg)
{
	struct mem_size_stats *mss = arg;
	struct page *page = vm_normal_page_pmd(vma, pmd);

	(void)addr;
	if (page) {
		smaps_account(vma->vm_mm->m, mss, page, true, pmd_dirty(pmd));
		mss->anonymous_thp += HPAGE_PMD_SIZE;
	}
	return 0;
}

static int smaps_pte_entry(struct vm_area_struct *vma, pte_t pte, uint64_t addr, void *arg)
{
	struct page *page = vm_normal_page(vma, pte);

	(void)addr;
	if (page)
		smaps_account(vma->vm_mm->m, arg, page, false, pte_dirty(pte));
	return 0;
}

static void smaps_walk(struct mm_struct *mm, struct mem_size_stats *mss)
{
	static const struct mm_walk_ops ops = { .pmd_entry = smaps_pmd_entry,
						.pte_entry = smaps_pte_entry };

	for (struct vm_area_struct *vma = mm->mmap; vma; vma = vma->vm_next)
		walk_page_range_vma(vma, vma->vm_start, vma->vm_end, &ops, mss);
}

int thps_proc_figures(thps_proc *p, uint64_t out[THPS_NR_PROC_ITEMS])
{
	struct mm_struct *mm = &p->mm;
	struct mem_size_stats mss = { 0 };
	int64_t rss, hiwater;
	const uint64_t kb = PAGE_SIZE >> 10;

	mm_lock(mm);
	smaps_walk(mm, &mss);
	rss = get_mm_rss(mm);
	hiwater = mm->hiwater_rss > rss ? mm->hiwater_rss : rss;
	out[THPS_PROC_Rss] = mss.resident >> 10;
	out[THPS_PROC_Pss] = (mss.pss >> PSS_SHIFT) >> 10;
	out[THPS_PROC_Pss_Anon] = (mss.pss_anon >> PSS_SHIFT) >> 10;
	out[THPS_PROC_Shared_Clean] = mss.shared_clean >> 10;
	out[THPS_PROC_Shared_Dirty] = mss.shared_dirty >> 10;
	out[THPS_PROC_Private_Clean] = mss.private_clean >> 10;
	out[THPS_PROC_Private_Dirty] = mss.private_dirty >> 10;
	out[THPS_PROC_Anonymous] = mss.anonymous >> 10;
	out[THPS_PROC_AnonHugePages] = mss.anonymous_thp >> 10;
	out[THPS_PROC_VmSize] = (uint64_t)mm->total_vm * kb;
	out[THPS_PROC_VmRSS] = (uint64_t)rss * kb;
	out[THPS_PROC_RssAnon] = (uint64_t)get_mm_counter(mm, MM_ANONPAGES) * kb;
	out[THPS_PROC_VmHWM] = (uint64_t)hiwater * kb;
	out[THPS_PROC_VmPTE] = (uint64_t)mm->pgtables_bytes >> 10;
	mm_unlock(mm);
	return 0;
}

int thps_proc_pgtables(thps_proc *p, uint64_t *pte_tables, uint64_t *upper_tables)
{
	struct mm_struct *mm = &p->mm;
	struct thps_machine *m = mm->m;
	uint64_t upper = 0;

	mm_lock(mm);
	for (int g = 0; mm->pgd != NO_PFN && g < PTRS_PER_PGD; g++) {
		const pgd_t *pgd = (const pgd_t *)pfn_address(m, mm->pgd) + g;
		const pud_t *pud;

		if (!pgd->pgd)
			continue;
		upper++;
		pud = pfn_address(m, table_pfn(pgd->pgd));
		for (int u = 0; u < PTRS_PER_PUD; u++)
			upper += pud[u].pud != 0;
	}
	*upper_tables = upper;
	*pte_tables = (uint64_t)mm->pgtables_bytes / PAGE_SIZE - upper;
	mm_unlock(mm);
	return 0;
}

int thps_proc_usage(thps_proc *p, uint64_t *rss_kb, uint64_t *anon_huge_kb)
{
	struct mm_struct *mm = &p->mm;
	uint64_t huge = 0;

	mm_lock(mm);
	for (struct vm_area_struct *vma = anon_huge_kb ? mm->mmap : NULL; vma; vma = vma->vm_next) {
		/* one walk from the top per PMD table (1 GiB), then its entries */
		pmd_t *table = NULL;
		uint64_t table_base = 1; /* no PUD-aligned address */

		for (uint64_t addr = ALIGN_UP(vma->vm_start, PMD_SIZE); addr + PMD_SIZE <= vma->vm_end;
		     addr += PMD_SIZE) {
			pmd_t v;

			if ((addr & PUD_MASK) != table_base) {
				pmd_t *pmd = pmd_walk(mm, addr);

				table_base = addr & PUD_MASK;
				table = pmd ? pmd - pmd_index(addr) : NULL;
			}
			if (!table) { /* no PMD table: on to the next 1 GiB */
				addr = table_base + PUD_SIZE - PMD_SIZE;
				continue;
			}
			v = pmdp_get(table + pmd_index(addr));
			if (!pmd_none(v) && pmd_trans_huge(v) && vm_normal_page_pmd(vma, v))
				huge += HPAGE_PMD_SIZE;
		}
	}
	*rss_kb = (uint64_t)get_mm_rss(mm) * (PAGE_SIZE >> 10);
	if (anon_huge_kb)
		*anon_huge_kb = huge >> 10;
	mm_unlock(mm);
	return 0;
}

int thps_pageinfo(thps_proc *p, uint64_t addr, struct thps_pageinfo *out)
{
	struct mm_struct *mm = &p->mm;
	struct thps_machine *m = mm->m;
	pmd_t *pmd;
	pmd_t v;
	uint64_t pfn = 0;
	bool present = false, writable = false, huge = false;

	memset(out, 0, sizeof(*out));
	mm_lock(mm);
	pmd = addr < TASK_SIZE ? pmd_walk(mm, addr) : NULL;
	if (pmd && !pmd_none(v = pmdp_get(pmd))) {
		if (pmd_trans_huge(v)) {
			present = pmd_present(v);
			huge = true;
			writable = pmd_write(v);
			pfn = pmd_pfn(v) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
			out->huge_zero = is_huge_zero_pmd(m, v);
		} else {
			pte_t pte = ptep_get(pte_offset(m, pmd, addr));

			present = pte_present(pte);
			writable = pte_write(pte);
			pfn = pte_pfn(pte);
			out->zero_page = present && is_zero_pfn(m, pfn);
		}
	}
	out->present = present;
	out->writable = present && writable;
	out->huge = present && huge;
	out->pfn = present ? pfn : 0;
	if (present && !out->zero_page && !out->huge_zero) {
		struct page *page = pfn_to_page(m, pfn);

		out->anon_exclusive = PageAnonExclusive(huge ? (struct page *)page_folio(m, page) : page);
		out->mapcount = folio_mapcount(page_folio(m, page));
		out->thp = folio_test_large(page_folio(m, page));
	}
	mm_unlock(mm);
	return 0;
}

int thps_pmd_mapped(thps_proc *p, const uint64_t *addr, size_t n, uint8_t *mapped)
{
	struct mm_struct *mm = &p->mm;

	mm_lock(mm);
	for (size_t i = 0; i < n; i++) {
		pmd_t *pmd = addr[i] < TASK_SIZE ? pmd_walk(mm, addr[i]) : NULL;
		pmd_t v;

		mapped[i] = pmd && !pmd_none(v = pmdp_get(pmd)) && pmd_trans_huge(v) &&
			    pmd_present(v);
	}
	mm_unlock(mm);
	return 0;
}

int thps_thp_possible(thps_proc *p, uint64_t addr)
{
	struct mm_struct *mm = &p->mm;
	struct vm_area_struct *vma;
	int possible = 0;

	mm_lock(mm);
	vma = addr < TASK_SIZE ? vma_lookup(mm, addr) : NULL;
	if (vma) {
		unsigned long orders = thp_vma_allowable_orders(
			vma, vma->vm_flags, THP_ORDERS_BELOW_PMD | (1UL << HPAGE_PMD_ORDER));

		for (int o = THPS_MTHP_MIN_ORDER; o <= HPAGE_PMD_ORDER && !possible; o++)
			possible = (orders & (1UL << o)) &&
				   (PAGE_SIZE << o) <= vma->vm_end - vma->vm_start;
	}
	mm_unlock(mm);
	return possible;
}

int thps_for_each_vma(thps_proc *p, thps_vma_fn fn, void *arg)
{
	struct mm_struct *mm = &p->mm;

	mm_lock(mm);
	for (struct vm_area_struct *v = mm->mmap; v; v = v->vm_next) {
		char flags[64];
		int prot = ((v->vm_flags & VM_READ) ? THPS_PROT_READ : 0) |
			   ((v->vm_flags & VM_WRITE) ? THPS_PROT_WRITE : 0) |
			   ((v->vm_flags & VM_EXEC) ? THPS_PROT_EXEC : 0);

		snprintf(flags, sizeof(flags), "%c%c%cp%s%s", (prot & 1) ? 'r' : '-',
			 (prot & 2) ? 'w' : '-', (prot & 4) ? 'x' : '-',
			 (v->vm_flags & VM_HUGEPAGE) ? " hg" : "",
			 (v->vm_flags & VM_NOHUGEPAGE) ? " nh" : "");
		fn(arg, v->vm_start, v->vm_end, prot, flags);
	}
	mm_unlock(mm);
	return 0;
}

/*
 * thps_range_stats: [start, end) counted as smaps would count it were it a
 * VMA of its own, page by page: a huge PMD counts only its pages inside
 * the range, so ranges that split a VMA (two mappings that merged) sum
 * to the VMA's figures, and ranges that cover the VMAs to smaps_rollup's.
 */
struct range_walk {
	struct thps_range_stats *st;
	uint64_t end;
};

static int range_pmd_entry(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg)
{
	struct range_walk *w = arg;
	uint64_t stop = ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, kb;

	if (stop > w->end)
		stop = w->end;
	kb = (stop - addr) >> 10;
	if (is_huge_zero_pmd(vma->vm_mm->m, pmd)) {
		w->st->huge_zero_kb += kb;
	} else if (vm_normal_page_pmd(vma, pmd)) {
		w->st->anon_kb += kb;
		w->st->anon_huge_kb += kb;
		w->st->folio_kb[HPAGE_PMD_ORDER] += kb;
	}
	return 0;
}

static int range_pte_entry(struct vm_area_struct *vma, pte_t pte, uint64_t addr, void *arg)
{
	struct range_walk *w = arg;
	struct thps_machine *m = vma->vm_mm->m;
	struct page *page = vm_normal_page(vma, pte);
	const uint64_t kb = PAGE_SIZE >> 10;

	(void)addr;
	if (page) {
		unsigned order = folio_order(page_folio(m, page));

		w->st->anon_kb += kb;
		w->st->folio_kb[order <= THPS_MTHP_MAX_ORDER ? order : THPS_MTHP_MAX_ORDER] += kb;
	} else if (is_zero_pfn(m, pte_pfn(pte))) {
		w->st->zero_kb += kb;
	}
	return 0;
}

/* Walk [start, end) of every VMA it meets, under the lock, each piece's
 * end in *piece_end for the callbacks. */
static void walk_range_vmas(struct mm_struct *mm, uint64_t start, uint64_t end,
			    const struct mm_walk_ops *ops, void *arg, uint64_t *piece_end)
{
	mm_lock(mm);
	for (struct vm_area_struct *vma = find_vma(mm, start); vma && vma->vm_start < end;
	     vma = vma->vm_next) {
		uint64_t s = vma->vm_start > start ? vma->vm_start : start;

		*piece_end = vma->vm_end < end ? vma->vm_end : end;
		walk_page_range_vma(vma, s, *piece_end, ops, arg);
	}
	mm_unlock(mm);
}

int thps_range_stats(thps_proc *p, uint64_t start, uint64_t end, struct thps_range_stats *out)
{
	static const struct mm_walk_ops ops = { .pmd_entry = range_pmd_entry,
						.pte_entry = range_pte_entry };
	struct range_walk w = { out, end };

	memset(out, 0, sizeof(*out));
	if (start >= end || (start | end) & ~PAGE_MASK)
		return -EINVAL;
	walk_range_vmas(&p->mm, start, end, &ops, &w, &w.end);
	return 0;
}

/* thps_range_anon: a page with a struct page counts (a special entry, as
 * the zero pages', does not), and a huge PMD its pages in the range unless
 * it is the huge zero page; nothing else is read. */
static int anon_pmd_entry(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg)
{
	struct range_walk *w = arg;
	uint64_t stop = ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE;

	if (stop > w->end)
		stop = w->end;
	if (vm_normal_page_pmd(vma, pmd)) {
		w->st->anon_kb += (stop - addr) >> 10;
		w->st->anon_huge_kb += (stop - addr) >> 10;
	}
	return 0;
}

static int anon_pte_range(struct vm_area_struct *vma, pte_t *pte, unsigned n, uint64_t addr,
			  void *arg)
{
	struct range_walk *w = arg;
	uint64_t pages = 0;

	(void)vma;
	(void)addr;
	for (unsigned i = 0; i < n; i++) {
		pte_t e = ptep_get(&pte[i]);

		pages += pte_present(e) && !pte_special(e);
	}
	w->st->anon_kb += pages * (PAGE_SIZE >> 10);
	return 0;
}

int thps_range_anon(thps_proc *p, uint64_t start, uint64_t end, uint64_t *anon_kb,
		    uint64_t *anon_huge_kb)
{
	static const struct mm_walk_ops ops = { .pmd_entry = anon_pmd_entry,
						.pte_range = anon_pte_range };
	struct thps_range_stats st = { 0 };
	struct range_walk w = { &st, end };

	if (start >= end || (start | end) & ~PAGE_MASK)
		return -EINVAL;
	walk_range_vmas(&p->mm, start, end, &ops, &w, &w.end);
	*anon_kb = st.anon_kb;
	*anon_huge_kb = st.anon_huge_kb;
	return 0;
}

/*
 * thps_folio_orders: what tools/mm/thpmaps reads from /proc/PID/pagemap and
 * /proc/PID/kpageflags, page by page: the order of the folio each page of
 * [start, end) is mapped from, whether a PMD or a PTE maps it, and
 * THPS_NO_FOLIO where nothing with a struct page is (no entry, the zero
 * pages, outside every VMA).
 */
struct orders_walk {
	uint8_t *orders;
	uint64_t start, end;
};

static int orders_pmd_entry(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg)
{
	struct orders_walk *w = arg;
	uint64_t stop = ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE;

	if (stop > w->end)
		stop = w->end;
	if (vm_normal_page_pmd(vma, pmd))
		memset(w->orders + ((addr - w->start) >> PAGE_SHIFT), HPAGE_PMD_ORDER,
		       (stop - addr) >> PAGE_SHIFT);
	return 0;
}

static int orders_pte_entry(struct vm_area_struct *vma, pte_t pte, uint64_t addr, void *arg)
{
	struct orders_walk *w = arg;
	struct page *page = vm_normal_page(vma, pte);

	if (page)
		w->orders[(addr - w->start) >> PAGE_SHIFT] =
			(uint8_t)folio_order(page_folio(vma->vm_mm->m, page));
	return 0;
}

int thps_folio_orders(thps_proc *p, uint64_t start, uint64_t end, uint8_t *orders)
{
	static const struct mm_walk_ops ops = { .pmd_entry = orders_pmd_entry,
						.pte_entry = orders_pte_entry };
	struct orders_walk w = { orders, start, end };

	if (start >= end || (start | end) & ~PAGE_MASK)
		return -EINVAL;
	memset(orders, THPS_NO_FOLIO, (end - start) >> PAGE_SHIFT);
	walk_range_vmas(&p->mm, start, end, &ops, &w, &w.end);
	return 0;
}
