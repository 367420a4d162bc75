/*
 * pgtable.c - allocating, depositing and freeing page-table pages (mirrors
 * mm/pgtable-generic.c, the table parts of mm/memory.c and free_pgd_range()).
 *
 * Tables are frames of simulated memory, counted in nr_page_table_pages;
 * PTE, PMD and PUD tables count in the process's VmPTE (mm->pgtables_bytes),
 * the top-level table does not, as in Linux.
 *
 * Every huge PMD comes with a deposited PTE table, taken when the PMD is
 * set and kept on the mm's stack, so that splitting the PMD later never
 * needs an allocation and cannot fail.  The deposited table counts in VmPTE
 * from the moment it is deposited (mm_inc_nr_ptes in set_huge_zero_folio
 * and friends).
 */
#include "internal.h"

static void mm_add_pgtables(struct mm_struct *mm, int64_t bytes)
{
	local_add(&mm->pgtables_bytes, bytes);
}

/* A page-table page, charged to the memory cgroup (GFP_PGTABLE_USER is
 * __GFP_ACCOUNT): NULL when there is no frame or no room under the limit. */
struct page *pte_alloc_one(struct mm_struct *mm)
{
	struct page *page = alloc_pages(mm->m, mm, GFP_PGTABLE, 0);

	if (page && mem_cgroup_charge(mm->m, mm, page, GFP_PGTABLE)) {
		atomic_set(&page->_refcount, 0);
		free_pages(mm->m, mm, page, 0);
		return NULL;
	}
	return page;
}

void pte_free(struct mm_struct *mm, struct page *pgtable)
{
	VM_BUG_ON_EXPENSIVE(!page_bytes_zero(mm->m, pgtable));
	/* a table is freed only once every entry is none: its bytes are zero */
	__SetPageZeroed(pgtable);
	atomic_set(&pgtable->_refcount, 0);
	free_pages(mm->m, mm, pgtable, 0);
}

int pgd_alloc(struct mm_struct *mm)
{
	struct page *page = pte_alloc_one(mm);

	if (!page)
		return -ENOMEM;
	mm->pgd = (uint32_t)page_to_pfn(mm->m, page);
	return 0;
}

void pgd_free(struct mm_struct *mm)
{
	pte_free(mm, pfn_to_page(mm->m, mm->pgd));
	mm->pgd = NO_PFN;
}

/* Walk to the PMD entry of addr, allocating the PUD and PMD tables. */
pmd_t *pmd_alloc_walk(struct mm_struct *mm, uint64_t addr)
{
	struct thps_machine *m = mm->m;
	pgd_t *pgd = pgd_offset(mm, addr);
	pud_t *pud;

	if (!READ_ONCE(pgd->pgd)) {
		struct page *t = pte_alloc_one(mm);

		if (!t)
			return NULL;
		mm_add_pgtables(mm, PAGE_SIZE);
		WRITE_ONCE(pgd->pgd, mk_table_entry(page_to_pfn(m, t)));
	}
	pud = pud_offset(m, pgd, addr);
	if (!READ_ONCE(pud->pud)) {
		struct page *t = pte_alloc_one(mm);

		if (!t)
			return NULL;
		mm_add_pgtables(mm, PAGE_SIZE);
		WRITE_ONCE(pud->pud, mk_table_entry(page_to_pfn(m, t)));
	}
	return pmd_offset(m, pud, addr);
}

pmd_t *pmd_walk(const struct mm_struct *mm, uint64_t addr)
{
	const struct thps_machine *m = mm->m;
	pgd_t *pgd = pgd_offset(mm, addr);
	pud_t *pud;

	if (!READ_ONCE(pgd->pgd))
		return NULL;
	pud = pud_offset(m, pgd, addr);
	if (!READ_ONCE(pud->pud))
		return NULL;
	return pmd_offset(m, pud, addr);
}

int __pte_alloc(struct mm_struct *mm, pmd_t *pmd)
{
	struct page *t = pte_alloc_one(mm);

	if (!t)
		return -ENOMEM;
	/* The fault reads the new table at once, then writes it.  On frame
	 * bytes the host never committed that is two host faults (its zero
	 * page, then a copy); storing one of the zeros first makes it one. */
	WRITE_ONCE(*(uint8_t *)pfn_address(mm->m, page_to_pfn(mm->m, t)), 0);
	mm_inc_nr_ptes(mm);
	set_pmd(pmd, __pmd(mk_table_entry(page_to_pfn(mm->m, t))));
	return 0;
}

void pgtable_trans_huge_deposit(struct mm_struct *mm, struct page *pgtable)
{
	pgtable->lru.next = mm->deposit_head;
	mm->deposit_head = (uint32_t)page_to_pfn(mm->m, pgtable);
	mm->nr_deposited++;
}

struct page *pgtable_trans_huge_withdraw(struct mm_struct *mm)
{
	struct page *pgtable;

	VM_BUG_ON_MM(mm->deposit_head == NO_PFN, mm);
	pgtable = pfn_to_page(mm->m, mm->deposit_head);
	mm->deposit_head = pgtable->lru.next;
	pgtable->lru.next = NO_PFN;
	mm->nr_deposited--;
	return pgtable;
}

/* Every entry none?  A cache line at a time: the OR of its eight entries
 * is one test, and the compiler vectorizes it. */
static bool table_empty(const struct thps_machine *m, uint64_t pfn)
{
	const uint64_t *e = pfn_address(m, pfn);

	for (int i = 0; i < PTRS_PER_PTE; i += 8) {
		uint64_t any = 0;

		for (int j = 0; j < 8; j++)
			any |= e[i + j];
		if (any)
			return false;
	}
	return true;
}

bool try_to_free_pte(struct mm_struct *mm, pmd_t *pmd)
{
	pmd_t v = pmdp_get(pmd);

	if (pmd_none(v) || pmd_trans_huge(v) || !table_empty(mm->m, table_pfn(v.pmd)))
		return false;
	pmd_clear(pmd);
	mm_dec_nr_ptes(mm);
	pte_free(mm, pfn_to_page(mm->m, table_pfn(v.pmd)));
	return true;
}

/*
 * free_pgd_range: free every table whose whole span lies in [floor, ceiling)
 * and meets [addr, end).  The caller has zapped the pages; a table still
 * holding an entry here is a bug.  ceiling 0 means the top of user space.
 */
void free_pgd_range(struct mm_struct *mm, uint64_t addr, uint64_t end, uint64_t floor,
		    uint64_t ceiling)
{
	struct thps_machine *m = mm->m;

	if (!ceiling)
		ceiling = 1UL << 47;
	for (uint64_t g = ALIGN_DOWN(addr, PGDIR_SIZE); g < end; g += PGDIR_SIZE) {
		pgd_t *pgd = pgd_offset(mm, g);
		uint64_t g_end = g + PGDIR_SIZE;

		if (!pgd->pgd)
			continue;
		for (uint64_t u = g > ALIGN_DOWN(addr, PUD_SIZE) ? g : ALIGN_DOWN(addr, PUD_SIZE);
		     u < end && u < g_end; u += PUD_SIZE) {
			pud_t *pud = pud_offset(m, pgd, u);

			if (!pud->pud)
				continue;
			for (uint64_t d = u > ALIGN_DOWN(addr, PMD_SIZE) ? u : ALIGN_DOWN(addr, PMD_SIZE);
			     d < end && d < u + PUD_SIZE; d += PMD_SIZE) {
				pmd_t *pmd = pmd_offset(m, pud, d);

				if (pmd_none(*pmd) || d < floor || d + PMD_SIZE > ceiling)
					continue;
				VM_BUG_ON_MM(pmd_trans_huge(*pmd), mm);
				VM_BUG_ON_MM(!table_empty(m, table_pfn(pmd->pmd)), mm);
				try_to_free_pte(mm, pmd);
			}
			if (u >= floor && u + PUD_SIZE <= ceiling &&
			    table_empty(m, table_pfn(pud->pud))) {
				uint64_t t = table_pfn(pud->pud);

				WRITE_ONCE(pud->pud, 0);
				mm_add_pgtables(mm, -(int64_t)PAGE_SIZE);
				pte_free(mm, pfn_to_page(m, t));
			}
		}
		if (g >= floor && g_end <= ceiling && table_empty(m, table_pfn(pgd->pgd))) {
			uint64_t t = table_pfn(pgd->pgd);

			WRITE_ONCE(pgd->pgd, 0);
			mm_add_pgtables(mm, -(int64_t)PAGE_SIZE);
			pte_free(mm, pfn_to_page(m, t));
		}
	}
}
