/*
 * debug.c - dumping state and the whole-state consistency checker (mirrors
 * mm/debug.c's dump_page/dump_vma/dump_mm; the checker is the model's own).
 *
 * thps_check() recomputes from the page tables of every process what the
 * counters should say and compares:
 *  - each anonymous page's mapcount equals the PTEs that map it, each
 *    folio's entire mapcount the PMDs, its reference count the mappings,
 *    its mm-id slots who maps it;
 *  - each process's Rss (MM_ANONPAGES) equals the pages its tables map, its
 *    VmPTE the tables it owns (deposited ones included), its deposit stack
 *    one table per huge PMD;
 *  - the huge zero page is never mapped writable, its reference count is
 *    what the chosen lifetime says; the zero pages are only mapped special;
 *  - no entry lies outside a VMA, no writable entry outside a writable VMA,
 *    and a writable anonymous entry is exclusive (PageAnonExclusive);
 *  - every frame is free (on a buddy list, in a process cache or a parked
 *    one, or never used) or reachable (a table, a mapped page, the huge zero page), the
 *    buddy lists are consistent and the free count adds up;
 *  - nr_anon_pages, nr_anon_transparent_hugepages, nr_page_table_pages and
 *    the deferred-split queue agree with all that.
 * It has no side effects.  It takes every lock, so run it when no other
 * thread is inside the model.
 */
#include <stdarg.h>

#include "internal.h"

void dump_page(struct thps_machine *m, const struct page *page)
{
	if (!m || !page) {
		fprintf(stderr, "page: (none)\n");
		return;
	}
	fprintf(stderr,
		"page: pfn %#llx flags %#x refcount %d mapcount %d order %u index %#llx%s%s%s%s%s%s\n",
		(unsigned long long)page_to_pfn(m, page), page->flags, atomic_read(&page->_refcount),
		atomic_read(&page->_mapcount), page->order, (unsigned long long)page->index,
		PageHead(page) ? " head" : "", PageTail(page) ? " tail" : "",
		PageAnon(page) ? " anon" : "", PageAnonExclusive(page) ? " exclusive" : "",
		PageBuddy(page) ? " buddy" : "", PageTable(page) ? " pgtable" : "");
	if (PageTail(page))
		fprintf(stderr, "  head pfn %#x\n", page->compound_head);
	if (PageHead(page)) {
		const struct folio *f = (const struct folio *)page;

		fprintf(stderr, "  folio: order %u entire %d large %d nr_pages_mapped %#x mm-ids %u:%d %u:%d%s\n",
			page->order, atomic_read(&f->_entire_mapcount), atomic_read(&f->_large_mapcount),
			atomic_read(&f->_nr_pages_mapped), f->_mm_id_0, f->_mm_id_mapcount[0],
			f->_mm_id_1, f->_mm_id_mapcount[1], f->_mm_ids_shared ? " shared" : "");
	}
}

void dump_vma(const struct vm_area_struct *vma)
{
	fprintf(stderr, "vma %#llx-%#llx flags %#llx pgoff %#llx anon_vma %llu%s prot %#llx\n",
		(unsigned long long)vma->vm_start, (unsigned long long)vma->vm_end,
		(unsigned long long)vma->vm_flags, (unsigned long long)vma->vm_pgoff,
		(unsigned long long)vma->anon_vma, vma->anon_vma_chained ? " (chained)" : "",
		(unsigned long long)vma->vm_page_prot.pgprot);
}

void dump_mm(const struct mm_struct *mm)
{
	fprintf(stderr, "mm id %u: rss %lld hiwater %lld pgtables_bytes %lld deposited %lld flags %#lx map_count %d\n",
		mm->mm_id, (long long)mm->rss_stat[MM_ANONPAGES], (long long)mm->hiwater_rss,
		(long long)mm->pgtables_bytes, (long long)mm->nr_deposited, mm->flags, mm->map_count);
	for (const struct vm_area_struct *v = mm->mmap; v; v = v->vm_next)
		dump_vma(v);
}

_Noreturn void bug_report(const char *file, int line, const char *cond, struct thps_machine *m,
			  const struct page *page, const struct vm_area_struct *vma,
			  const struct mm_struct *mm)
{
	fprintf(stderr, "thpsim: BUG at %s:%d: %s\n", file, line, cond);
	if (page)
		dump_page(m, page);
	if (vma)
		dump_vma(vma);
	if (mm)
		dump_mm(mm);
	fflush(stderr);
	abort();
}

/* ---- the checker ---- */
enum frame_use { USE_NONE, USE_FREE, USE_TABLE, USE_ANON, USE_HZP, USE_ZERO };

struct frame_exp {
	int32_t map;    /* PTE mappings of this page */
	int32_t entire; /* head: PMD mappings */
	int32_t refs;   /* head/order-0: references expected from mappings */
	uint8_t use;
	uint8_t mms;    /* head: distinct address spaces seen (capped) */
	uint32_t last_mm;
};

struct checker {
	struct thps_machine *m;
	struct frame_exp *f;
	uint64_t nframes;
	char *err;
	size_t errlen;
	int failed;
	uint64_t hzp_pmds, mms_with_hzp_flag;
};

static int fail(struct checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->failed++)
		return -1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int mark_table(struct checker *c, uint64_t pfn, const char *what)
{
	if (pfn >= c->nframes)
		return fail(c, "%s table at pfn %#llx beyond memory", what, (unsigned long long)pfn);
	if (c->f[pfn].use != USE_NONE)
		return fail(c, "%s table at pfn %#llx used twice", what, (unsigned long long)pfn);
	if (!PageTable(pfn_to_page(c->m, pfn)))
		return fail(c, "%s table at pfn %#llx not marked PageTable", what,
			    (unsigned long long)pfn);
	c->f[pfn].use = USE_TABLE;
	return 0;
}

static void note_mm(struct frame_exp *head, uint32_t mm_id)
{
	if (head->last_mm != mm_id) {
		head->last_mm = mm_id;
		if (head->mms < 255)
			head->mms++;
	}
}

static int check_anon_page(struct checker *c, struct mm_struct *mm, uint64_t pfn, bool writable,
			   uint64_t addr)
{
	struct thps_machine *m = c->m;
	struct page *page = pfn_to_page(m, pfn);
	struct folio *folio = page_folio(m, page);
	uint64_t head = folio_pfn(m, folio);

	if (!folio_test_anon(folio) || PageBuddy(page) || PageTable(page))
		return fail(c, "mm %u maps pfn %#llx at %#llx, which is not an anonymous page",
			    mm->mm_id, (unsigned long long)pfn, (unsigned long long)addr);
	if (writable && !PageAnonExclusive(page))
		return fail(c, "mm %u maps shared pfn %#llx writable at %#llx", mm->mm_id,
			    (unsigned long long)pfn, (unsigned long long)addr);
	c->f[pfn].map++;
	c->f[pfn].use = USE_ANON;
	c->f[head].refs++;
	c->f[head].use = USE_ANON;
	note_mm(&c->f[head], mm->mm_id);
	return 0;
}

static int check_pte_table(struct checker *c, struct mm_struct *mm, pmd_t *pmd, uint64_t base,
			   int64_t *rss)
{
	struct thps_machine *m = c->m;
	const struct vm_area_struct *vma = NULL;

	for (int i = 0; i < PTRS_PER_PTE; i++) {
		uint64_t addr = base + ((uint64_t)i << PAGE_SHIFT);
		pte_t pte = ptep_get(pte_offset(m, pmd, addr));

		if (pte_none(pte))
			continue;
		/* one lookup per VMA the table spans, not one per entry */
		if (!vma || addr >= vma->vm_end)
			vma = vma_find_const(mm, addr);
		if (!vma)
			return fail(c, "mm %u: entry at %#llx outside every VMA", mm->mm_id,
				    (unsigned long long)addr);
		if (pte_write(pte) && !(vma->vm_flags & VM_WRITE))
			return fail(c, "mm %u: writable entry at %#llx in a read-only VMA", mm->mm_id,
				    (unsigned long long)addr);
		if (!(vma->vm_flags & VM_ACCESS_FLAGS) && (pte.pte & _PAGE_PRESENT))
			return fail(c, "mm %u: present entry at %#llx in a PROT_NONE VMA", mm->mm_id,
				    (unsigned long long)addr);
		if (pte_special(pte)) {
			if (!is_zero_pfn(m, pte_pfn(pte)) || pte_write(pte))
				return fail(c, "mm %u: special entry at %#llx is not the read-only zero page",
					    mm->mm_id, (unsigned long long)addr);
			continue;
		}
		if (is_zero_pfn(m, pte_pfn(pte)) || is_huge_zero_pfn(m, pte_pfn(pte) & ~511ULL))
			return fail(c, "mm %u: a zero page mapped without the special bit at %#llx",
				    mm->mm_id, (unsigned long long)addr);
		if (check_anon_page(c, mm, pte_pfn(pte), pte_write(pte), addr))
			return -1;
		(*rss)++;
	}
	return 0;
}

static int check_pmd(struct checker *c, struct mm_struct *mm, pmd_t *pmd, uint64_t addr,
		     int64_t *rss, int64_t *tables, int64_t *huge)
{
	struct thps_machine *m = c->m;
	pmd_t v = pmdp_get(pmd);
	const struct vm_area_struct *vma;

	if (!pmd_trans_huge(v)) {
		(*tables)++;
		if (mark_table(c, table_pfn(v.pmd), "PTE"))
			return -1;
		return check_pte_table(c, mm, pmd, addr, rss);
	}
	(*huge)++;
	vma = vma_find_const(mm, addr);
	if (!vma || vma->vm_end < addr + HPAGE_PMD_SIZE)
		return fail(c, "mm %u: huge PMD at %#llx not inside one VMA", mm->mm_id,
			    (unsigned long long)addr);
	if (pmd_write(v) && !(vma->vm_flags & VM_WRITE))
		return fail(c, "mm %u: writable huge PMD at %#llx in a read-only VMA", mm->mm_id,
			    (unsigned long long)addr);
	if (is_huge_zero_pmd(m, v)) {
		if (pmd_write(v))
			return fail(c, "mm %u: the huge zero page is mapped writable at %#llx",
				    mm->mm_id, (unsigned long long)addr);
		c->hzp_pmds++;
		return 0;
	}
	{
		uint64_t pfn = pmd_pfn(v);
		struct page *page = pfn_to_page(m, pfn);
		struct folio *folio = page_folio(m, page);

		if (!PageHead(page) || folio_order(folio) != HPAGE_PMD_ORDER || !folio_test_anon(folio))
			return fail(c, "mm %u: huge PMD at %#llx maps pfn %#llx, not an anonymous THP",
				    mm->mm_id, (unsigned long long)addr, (unsigned long long)pfn);
		if (pmd_write(v) && !PageAnonExclusive(page))
			return fail(c, "mm %u: shared THP mapped writable at %#llx", mm->mm_id,
				    (unsigned long long)addr);
		c->f[pfn].entire++;
		c->f[pfn].refs++;
		c->f[pfn].use = USE_ANON;
		note_mm(&c->f[pfn], mm->mm_id);
		*rss += HPAGE_PMD_NR;
	}
	return 0;
}

static int check_mm(struct checker *c, struct mm_struct *mm)
{
	struct thps_machine *m = c->m;
	int64_t rss = 0, tables = 0, huge = 0, upper = 0;

	if (!vma_tree_check(mm, c->err, c->errlen))
		return fail(c, "%s", c->err);
	if (mm->pgd == NO_PFN)
		return 0;
	if (mark_table(c, mm->pgd, "top-level"))
		return -1;
	for (int g = 0; g < PTRS_PER_PGD; g++) {
		pgd_t *pgd = (pgd_t *)pfn_address(m, mm->pgd) + g;

		if (!pgd->pgd)
			continue;
		upper++;
		if (mark_table(c, table_pfn(pgd->pgd), "PUD"))
			return -1;
		for (int u = 0; u < PTRS_PER_PUD; u++) {
			uint64_t ua = ((uint64_t)g << PGDIR_SHIFT) | ((uint64_t)u << PUD_SHIFT);
			pud_t *pud = pud_offset(m, pgd, ua);

			if (!pud->pud)
				continue;
			upper++;
			if (mark_table(c, table_pfn(pud->pud), "PMD"))
				return -1;
			for (int d = 0; d < PTRS_PER_PMD; d++) {
				uint64_t da = ua | ((uint64_t)d << PMD_SHIFT);
				pmd_t *pmd = pmd_offset(m, pud, da);

				if (pmd_none(*pmd))
					continue;
				if (check_pmd(c, mm, pmd, da, &rss, &tables, &huge))
					return -1;
			}
		}
	}
	{
		int64_t n = 0;

		for (uint32_t pfn = mm->deposit_head; pfn != NO_PFN; pfn = pfn_to_page(m, pfn)->lru.next) {
			if (mark_table(c, pfn, "deposited"))
				return -1;
			if (!page_bytes_zero(m, pfn_to_page(m, pfn)))
				return fail(c, "mm %u: deposited table %#x not empty", mm->mm_id, pfn);
			if (++n > huge)
				break;
		}
		if (n != huge || mm->nr_deposited != huge)
			return fail(c, "mm %u: %lld huge PMDs but %lld tables deposited (count %lld)",
				    mm->mm_id, (long long)huge, (long long)n, (long long)mm->nr_deposited);
	}
	if (rss != get_mm_rss(mm))
		return fail(c, "mm %u: Rss counter %lld pages but the tables map %lld", mm->mm_id,
			    (long long)get_mm_rss(mm), (long long)rss);
	if (mm->pgtables_bytes != (int64_t)((upper + tables + huge) * PAGE_SIZE))
		return fail(c, "mm %u: VmPTE %lld bytes but %lld tables found", mm->mm_id,
			    (long long)mm->pgtables_bytes, (long long)(upper + tables + huge));
	if (mm->flags & (1UL << MMF_HUGE_ZERO_FOLIO))
		c->mms_with_hzp_flag++;
	return 0;
}

static int check_folio(struct checker *c, uint64_t pfn, uint64_t *mapped_pages, uint64_t *thps)
{
	struct thps_machine *m = c->m;
	struct page *page = pfn_to_page(m, pfn);
	struct folio *folio = (struct folio *)page;
	struct frame_exp *e = &c->f[pfn];
	uint64_t nr = (uint64_t)folio_nr_pages(folio), pages_mapped = 0;
	int64_t total_map = 0;

	if (folio_ref_count(folio) != e->refs)
		return fail(c, "pfn %#llx: refcount %d but %d mappings", (unsigned long long)pfn,
			    folio_ref_count(folio), e->refs);
	if (!e->refs)
		return fail(c, "pfn %#llx: anonymous folio nobody maps (leaked)", (unsigned long long)pfn);
	for (uint64_t i = 0; i < nr; i++) {
		if (atomic_read(&page[i]._mapcount) != c->f[pfn + i].map)
			return fail(c, "pfn %#llx: mapcount %d but %d PTEs map it",
				    (unsigned long long)(pfn + i), atomic_read(&page[i]._mapcount),
				    c->f[pfn + i].map);
		if (nr > 1 && (!PageTail(&page[i]) != !i || (i && page[i].compound_head != pfn)))
			return fail(c, "pfn %#llx: bad compound page", (unsigned long long)(pfn + i));
		total_map += c->f[pfn + i].map;
		if (c->f[pfn + i].map || e->entire)
			pages_mapped++;
		c->f[pfn + i].use = USE_ANON;
	}
	*mapped_pages += pages_mapped;
	if (nr == 1)
		return 0;
	if (e->entire)
		(*thps)++;
	if (folio_entire_mapcount(folio) != e->entire)
		return fail(c, "pfn %#llx: entire mapcount %d but %d PMDs map it",
			    (unsigned long long)pfn, folio_entire_mapcount(folio), e->entire);
	if (atomic_read(&folio->_large_mapcount) != total_map + e->entire)
		return fail(c, "pfn %#llx: large mapcount %d but %lld mappings", (unsigned long long)pfn,
			    atomic_read(&folio->_large_mapcount), (long long)(total_map + e->entire));
	{
		int mapped = atomic_read(&folio->_nr_pages_mapped);
		int64_t pte_mapped = 0;

		for (uint64_t i = 0; i < nr; i++)
			pte_mapped += c->f[pfn + i].map > 0;
		if ((mapped & FOLIO_PAGES_MAPPED) != pte_mapped || !(mapped & ENTIRELY_MAPPED) != !e->entire)
			return fail(c, "pfn %#llx: nr_pages_mapped %#x but %lld pages PTE-mapped, %d PMDs",
				    (unsigned long long)pfn, mapped, (long long)pte_mapped, e->entire);
	}
	if (e->mms > 1 && !folio->_mm_ids_shared)
		return fail(c, "pfn %#llx: mapped by %d processes but not marked maybe-shared",
			    (unsigned long long)pfn, e->mms);
	{
		int32_t slots = folio->_mm_id_mapcount[0] + folio->_mm_id_mapcount[1];

		if (slots > atomic_read(&folio->_large_mapcount))
			return fail(c, "pfn %#llx: mm-id slots hold %d of %d mappings",
				    (unsigned long long)pfn, slots, atomic_read(&folio->_large_mapcount));
	}
	return 0;
}

/* What the walk over every frame counts, for the totals checked after it. */
struct frame_tally {
	uint64_t free_frames;  /* on the buddy lists, and never used (above the wilderness) */
	uint64_t mapped_pages; /* anonymous pages mapped: nr_anon_pages */
	uint64_t thps;         /* folios PMD-mapped: nr_anon_transparent_hugepages */
	uint64_t tables;       /* page-table frames: nr_page_table_pages */
	uint64_t pcp;          /* free frames in process caches and parked ones */
	uint64_t charged;      /* frames charged to the memory cgroup */
	int64_t free_per_order[NR_PAGE_ORDERS]; /* buddy blocks of each order */
};

/* A free buddy block at pfn: aligned, inside memory, no frame of it in use
 * or still charged. */
static int check_free_block(struct checker *c, uint64_t pfn, struct page *page)
{
	uint64_t nr = 1UL << page->order;

	if (!IS_ALIGNED(pfn, nr) || pfn + nr > c->nframes)
		return fail(c, "free block at %#llx order %u misaligned",
			    (unsigned long long)pfn, page->order);
	for (uint64_t i = 0; i < nr; i++)
		if (c->f[pfn + i].use != USE_NONE)
			return fail(c, "free frame %#llx is in use",
				    (unsigned long long)(pfn + i));
	for (uint64_t i = 0; i < nr; i++)
		if (test_bit_flags(page + i, PG_memcg))
			return fail(c, "free frame %#llx still charged",
				    (unsigned long long)(pfn + i));
	return 0;
}

/* The huge zero page's frames at hzp: never mapped as pages, one reference
 * (the machine's), and all zero in the test build. */
static int check_hzp_frames(struct checker *c, uint32_t hzp, struct page *page)
{
	struct thps_machine *m = c->m;
	uint64_t pfn = hzp;

	for (uint64_t i = 0; i < HPAGE_PMD_NR; i++)
		if (c->f[pfn + i].use != USE_NONE || c->f[pfn + i].map)
			return fail(c, "huge zero page frame %#llx mapped as a page",
				    (unsigned long long)(pfn + i));
	if (!PageHugeZero(page) || folio_ref_count((struct folio *)page) != 1)
		return fail(c, "huge zero page at %#x has refcount %d",
			    hzp, folio_ref_count((struct folio *)page));
	if (THPS_DEBUG >= 2)
		for (uint64_t i = 0; i < HPAGE_PMD_NR; i++)
			if (!page_bytes_zero_raw(m, page + i))
				return fail(c, "huge zero page holds a nonzero byte");
	return 0;
}

/* Every frame up to the wilderness, in order: free (a buddy block, a cached
 * frame), reserved, the zero pages, a table or an anonymous folio whose
 * counts match what check_mm found; anything else is a leak.  Counts into
 * t what the totals are checked against. */
static int tally_frames(struct checker *c, struct frame_tally *t)
{
	struct thps_machine *m = c->m;
	uint32_t hzp = READ_ONCE(m->huge_zero_pfn);

	for (uint64_t pfn = 0; pfn < c->nframes;) {
		struct page *page = pfn_to_page(m, pfn);
		struct frame_exp *e = &c->f[pfn];

		if (pfn == m->zero_pfn) {
			if (!PageReserved(page))
				return fail(c, "the zero page is not reserved");
			pfn++;
			continue;
		}
		if (PageReserved(page)) { /* held for good (thps_shape_free) */
			if (e->use != USE_NONE || e->map)
				return fail(c, "reserved frame %#llx is in use", (unsigned long long)pfn);
			pfn++;
			continue;
		}
		if (PageBuddy(page)) {
			uint64_t nr = 1UL << page->order;

			if (check_free_block(c, pfn, page))
				return -1;
			t->free_per_order[page->order]++;
			t->free_frames += nr;
			pfn += nr;
			continue;
		}
		if (PagePcp(page)) {
			if (e->use != USE_NONE)
				return fail(c, "cached free frame %#llx is in use", (unsigned long long)pfn);
			t->pcp++;
			pfn++;
			continue;
		}
		if (pfn == hzp) {
			if (check_hzp_frames(c, hzp, page))
				return -1;
			pfn += HPAGE_PMD_NR;
			continue;
		}
		if (PageTable(page)) {
			if (e->use != USE_TABLE)
				return fail(c, "page-table frame %#llx belongs to no process (leaked)",
					    (unsigned long long)pfn);
			if (!test_bit_flags(page, PG_memcg))
				return fail(c, "page-table frame %#llx is not charged",
					    (unsigned long long)pfn);
			t->charged++;
			t->tables++;
			pfn++;
			continue;
		}
		if (e->use == USE_TABLE)
			return fail(c, "frame %#llx used as a table but not marked", (unsigned long long)pfn);
		if (PageAnon(page) && !PageTail(page)) {
			uint64_t nr = (uint64_t)folio_nr_pages((struct folio *)page);

			if (check_folio(c, pfn, &t->mapped_pages, &t->thps))
				return -1;
			for (uint64_t i = 0; i < nr; i++)
				if (!test_bit_flags(page + i, PG_memcg))
					return fail(c, "frame %#llx of an anonymous folio is not charged",
						    (unsigned long long)(pfn + i));
			t->charged += nr;
			pfn += nr;
			continue;
		}
		if (e->use != USE_NONE || e->map)
			return fail(c, "frame %#llx is mapped but not an anonymous page",
				    (unsigned long long)pfn);
		return fail(c, "frame %#llx is neither free nor in use (leaked): flags %#x refcount %d",
			    (unsigned long long)pfn, page->flags, atomic_read(&page->_refcount));
	}
	return 0;
}

/* Each buddy free list holds exactly the free blocks of its order the walk
 * found, and its count says so. */
static int check_free_lists(struct checker *c, const int64_t free_per_order[NR_PAGE_ORDERS])
{
	struct thps_machine *m = c->m;

	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		int64_t n = 0;

		for (uint32_t pfn = m->zone.free_area[o].head; pfn != NO_PFN;
		     pfn = pfn_to_page(m, pfn)->lru.next) {
			struct page *page = pfn_to_page(m, pfn);

			if (!PageBuddy(page) || page->order != o)
				return fail(c, "free list %d holds pfn %#x of order %u", o, pfn, page->order);
			if (++n > free_per_order[o])
				break;
		}
		if (n != free_per_order[o] || (uint64_t)n != m->zone.free_area[o].nr_free)
			return fail(c, "free list %d: %lld listed, %lld free blocks, count %llu", o,
				    (long long)n, (long long)free_per_order[o],
				    (unsigned long long)m->zone.free_area[o].nr_free);
	}
	return 0;
}

/* The frames the walk found cached (pcp) are those the processes' caches
 * and the parked caches count, and the parked pool is within its bounds. */
static int check_pcp_counts(struct checker *c, uint64_t pcp)
{
	struct thps_machine *m = c->m;
	uint64_t cached = 0;
	int64_t parked = 0;

	for (struct thps_proc *p = m->procs; p; p = p->next)
		cached += (uint64_t)p->mm.pcp.count;
	for (int i = 0; i < m->pcp_pool.nr; i++)
		parked += m->pcp_pool.list[i].count;
	if (parked != m->pcp_pool.count || m->pcp_pool.nr > PCP_POOL_LISTS ||
	    parked > PCP_POOL_HIGH)
		return fail(c, "parked caches: %d lists of %lld frames, count %lld",
			    m->pcp_pool.nr, (long long)parked, (long long)m->pcp_pool.count);
	cached += (uint64_t)parked;
	if (cached != pcp)
		return fail(c, "%llu frames in process caches but counts say %llu",
			    (unsigned long long)pcp, (unsigned long long)cached);
	return 0;
}

/* The gauges nr_anon_pages, nr_anon_transparent_hugepages and
 * nr_page_table_pages against what the walk counted. */
static int check_vm_gauges(struct checker *c, const struct frame_tally *t)
{
	struct thps_machine *m = c->m;
	uint64_t v[THPS_NR_VM_ITEMS];

	/* sum them without thps_vmstat (which takes the list lock) */
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++) {
		int64_t s = __atomic_load_n(&m->stat.v[i], __ATOMIC_RELAXED);

		for (struct thps_proc *p = m->procs; p; p = p->next)
			s += p->mm.stat.v[i];
		v[i] = (uint64_t)s;
	}
	if (v[THPS_VM_nr_anon_pages] != t->mapped_pages)
		return fail(c, "nr_anon_pages %lld but %llu anonymous pages mapped",
			    (long long)v[THPS_VM_nr_anon_pages], (unsigned long long)t->mapped_pages);
	if (v[THPS_VM_nr_anon_transparent_hugepages] != t->thps)
		return fail(c, "nr_anon_transparent_hugepages %lld but %llu THPs PMD-mapped",
			    (long long)v[THPS_VM_nr_anon_transparent_hugepages],
			    (unsigned long long)t->thps);
	if (v[THPS_VM_nr_page_table_pages] != t->tables)
		return fail(c, "nr_page_table_pages %lld but %llu tables",
			    (long long)v[THPS_VM_nr_page_table_pages], (unsigned long long)t->tables);
	return 0;
}

/* Every frame accounted for (tally_frames), then the totals: the free
 * lists, the memory cgroup's charge, the free count, the caches and the
 * gauges. */
static int check_frames(struct checker *c, uint64_t mapped_expect_unused)
{
	struct thps_machine *m = c->m;
	struct frame_tally t = { .free_frames = m->nr_frames - m->zone.wilderness };

	(void)mapped_expect_unused;
	if (tally_frames(c, &t) || check_free_lists(c, t.free_per_order))
		return -1;
	if (t.charged + (uint64_t)atomic64_read(&m->memcg.stock) !=
	    (uint64_t)atomic64_read(&m->memcg.usage))
		return fail(c, "%llu frames charged and %lld in the stock, memory.current %lld pages",
			    (unsigned long long)t.charged, (long long)atomic64_read(&m->memcg.stock),
			    (long long)atomic64_read(&m->memcg.usage));
	if (t.free_frames != m->zone.nr_free_pages)
		return fail(c, "%llu frames free on the lists but nr_free_pages %llu",
			    (unsigned long long)t.free_frames, (unsigned long long)m->zone.nr_free_pages);
	if (check_pcp_counts(c, t.pcp))
		return -1;
	return check_vm_gauges(c, &t);
}

static int check_hzp(struct checker *c)
{
	struct thps_machine *m = c->m;
	int refs = atomic_read(&m->huge_zero_refcount);

	if (READ_ONCE(m->huge_zero_pfn) == NO_PFN) {
		if (refs || c->hzp_pmds || c->mms_with_hzp_flag)
			return fail(c, "no huge zero page, but refcount %d, %llu PMDs, %llu flagged mms",
				    refs, (unsigned long long)c->hzp_pmds,
				    (unsigned long long)c->mms_with_hzp_flag);
		return 0;
	}
	switch (m->knobs.hzp_lifetime) {
	case HZP_REFCOUNT:
		if ((uint64_t)refs != 1 + c->hzp_pmds)
			return fail(c, "huge zero page refcount %d but %llu PMDs map it", refs,
				    (unsigned long long)c->hzp_pmds);
		break;
	case HZP_PER_MM:
		if ((uint64_t)refs != 1 + c->mms_with_hzp_flag)
			return fail(c, "huge zero page refcount %d but %llu processes hold it", refs,
				    (unsigned long long)c->mms_with_hzp_flag);
		break;
	default:
		if (refs < 1)
			return fail(c, "persistent huge zero page has refcount %d", refs);
	}
	return 0;
}

static int check_split_queue(struct checker *c)
{
	struct thps_machine *m = c->m;
	int64_t n = 0;

	for (uint32_t pfn = m->split_queue_head; pfn != NO_PFN;) {
		struct folio *folio = (struct folio *)pfn_to_page(m, pfn);

		if (!folio_test_large(folio) || !folio_test_anon(folio) ||
		    !test_bit_flags(folio_page(folio, 1), PG_deferred))
			return fail(c, "deferred-split queue holds pfn %#x, not a queued THP", pfn);
		if (folio_test_partially_mapped(folio) && !c->f[pfn].entire) {
			int64_t mapped = 0;

			for (int64_t i = 0; i < folio_nr_pages(folio); i++)
				mapped += c->f[pfn + i].map > 0;
			if (mapped == folio_nr_pages(folio))
				return fail(c, "pfn %#x queued as partially mapped but fully mapped", pfn);
		}
		if (++n > m->split_queue_len)
			break;
		pfn = folio->_deferred_list.next;
	}
	if (n != m->split_queue_len)
		return fail(c, "deferred-split queue: %lld folios, length %lld", (long long)n,
			    (long long)m->split_queue_len);
	return 0;
}

int thps_check(thps_machine *m)
{
	struct checker c = { .m = m, .err = m->errbuf, .errlen = sizeof(m->errbuf) };
	int ret = 0;

	spin_lock(&m->proc_lock);
	for (struct thps_proc *p = m->procs; p; p = p->next)
		spin_lock(&p->mm.lock);
	spin_lock(&m->pcp_pool.lock);
	spin_lock(&m->zone.lock);
	spin_lock(&m->split_queue_lock);
	c.nframes = m->zone.wilderness;
	if (c.nframes > m->check_scratch_frames) {
		void *f = realloc(m->check_scratch, c.nframes * sizeof(*c.f));

		if (!f) {
			ret = -ENOMEM;
			goto out;
		}
		m->check_scratch = f;
		m->check_scratch_frames = c.nframes;
	}
	c.f = m->check_scratch;
	memset(c.f, 0, c.nframes * sizeof(*c.f));
	spin_lock(&m->err_lock);
	for (struct thps_proc *p = m->procs; p && !c.failed; p = p->next)
		check_mm(&c, &p->mm);
	if (!c.failed)
		check_frames(&c, 0);
	if (!c.failed)
		check_hzp(&c);
	if (!c.failed)
		check_split_queue(&c);
	spin_unlock(&m->err_lock);
	ret = c.failed ? -EUCLEAN : 0;
out:
	spin_unlock(&m->split_queue_lock);
	spin_unlock(&m->zone.lock);
	spin_unlock(&m->pcp_pool.lock);
	for (struct thps_proc *p = m->procs; p; p = p->next)
		spin_unlock(&p->mm.lock);
	spin_unlock(&m->proc_lock);
	return ret;
}
