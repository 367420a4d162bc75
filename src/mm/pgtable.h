/*
 * pgtable.h - typed page-table entries and their accessors, as in
 * arch/x86/include/asm/pgtable.h, and the walk to an entry.
 *
 * Entries hold the real x86-64 encoding: the frame number in bits 12-51,
 * present, writable, user, accessed, dirty, PSE (a 2 MiB PMD), the software
 * bit "special" (no struct page to count: the zero pages) and NX.  A
 * PROT_NONE entry keeps its frame with the present bit clear and the
 * PROTNONE bit set, as on x86.
 *
 * Tables are frames of simulated memory: an entry's table is the frame's
 * bytes, so the walk costs what a hardware walk costs, four loads.
 */
#ifndef THPSIM_PGTABLE_H
#define THPSIM_PGTABLE_H

#include "types.h"

/* ---- frames ---- */
static inline struct page *pfn_to_page(const struct thps_machine *m, uint64_t pfn)
{
	return &m->mem_map[pfn];
}
static inline uint64_t page_to_pfn(const struct thps_machine *m, const struct page *page)
{
	return (uint64_t)(page - m->mem_map);
}
static inline void *pfn_address(const struct thps_machine *m, uint64_t pfn)
{
	return m->ram + (pfn << PAGE_SHIFT);
}
static inline void *page_address(const struct thps_machine *m, const struct page *page)
{
	return pfn_address(m, page_to_pfn(m, page));
}

/* ---- entries: value, construction, tests ---- */
#define ENTRY_OPS(T, field)                                                                    \
	static inline pteval_t T##_val(T##_t e) { return e.field; }                            \
	static inline T##_t __##T(pteval_t v) { return (T##_t){ v }; }                        \
	static inline bool T##_none(T##_t e) { return e.field == 0; }                          \
	static inline uint64_t T##_pfn(T##_t e) { return (e.field & PTE_PFN_MASK) >> PAGE_SHIFT; } \
	static inline bool T##_write(T##_t e) { return (e.field & _PAGE_RW) != 0; }            \
	static inline bool T##_dirty(T##_t e) { return (e.field & _PAGE_DIRTY) != 0; }         \
	static inline bool T##_young(T##_t e) { return (e.field & _PAGE_ACCESSED) != 0; }      \
	static inline bool T##_special(T##_t e) { return (e.field & _PAGE_SPECIAL) != 0; }     \
	static inline T##_t T##_mkwrite(T##_t e) { return (T##_t){ e.field | _PAGE_RW }; }     \
	static inline T##_t T##_wrprotect(T##_t e) { return (T##_t){ e.field & ~_PAGE_RW }; } \
	static inline T##_t T##_mkdirty(T##_t e) { return (T##_t){ e.field | _PAGE_DIRTY }; }  \
	static inline T##_t T##_mkclean(T##_t e) { return (T##_t){ e.field & ~_PAGE_DIRTY }; } \
	static inline T##_t T##_mkyoung(T##_t e) { return (T##_t){ e.field | _PAGE_ACCESSED }; } \
	static inline T##_t T##_mkold(T##_t e) { return (T##_t){ e.field & ~_PAGE_ACCESSED }; } \
	static inline T##_t T##_mkspecial(T##_t e) { return (T##_t){ e.field | _PAGE_SPECIAL }; }

ENTRY_OPS(pte, pte)
ENTRY_OPS(pmd, pmd)
#undef ENTRY_OPS

static inline pud_t __pud(pteval_t v) { return (pud_t){ v }; }
static inline pgd_t __pgd(pteval_t v) { return (pgd_t){ v }; }

/* pte_present: mapped, maybe PROT_NONE.  The MMU needs _PAGE_PRESENT. */
static inline bool pte_present(pte_t pte)
{
	return (pte.pte & (_PAGE_PRESENT | _PAGE_PROTNONE)) != 0;
}
static inline bool pte_protnone(pte_t pte)
{
	return (pte.pte & (_PAGE_PRESENT | _PAGE_PROTNONE)) == _PAGE_PROTNONE;
}
static inline pte_t pfn_pte(uint64_t pfn, pgprot_t prot)
{
	return (pte_t){ (pfn << PAGE_SHIFT) | prot.pgprot };
}
static inline pte_t pte_modify(pte_t pte, pgprot_t newprot)
{
	return (pte_t){ (pte.pte & _PAGE_CHG_MASK) | (newprot.pgprot & ~_PAGE_CHG_MASK) };
}

static inline bool pmd_present(pmd_t pmd)
{
	return (pmd.pmd & (_PAGE_PRESENT | _PAGE_PROTNONE | _PAGE_PSE)) != 0;
}
/* A PMD that maps 2 MiB itself rather than pointing to a PTE table. */
static inline bool pmd_trans_huge(pmd_t pmd)
{
	return (pmd.pmd & _PAGE_PSE) != 0;
}
static inline bool pmd_protnone(pmd_t pmd)
{
	return (pmd.pmd & (_PAGE_PRESENT | _PAGE_PROTNONE)) == _PAGE_PROTNONE;
}
static inline pmd_t pfn_pmd(uint64_t pfn, pgprot_t prot)
{
	return (pmd_t){ (pfn << PAGE_SHIFT) | prot.pgprot };
}
static inline pmd_t pmd_mkhuge(pmd_t pmd)
{
	return (pmd_t){ pmd.pmd | _PAGE_PSE };
}
static inline pmd_t pmd_modify(pmd_t pmd, pgprot_t newprot)
{
	return (pmd_t){ (pmd.pmd & _HPAGE_CHG_MASK) | (newprot.pgprot & ~_HPAGE_CHG_MASK) };
}
/* The 4 KiB entry that maps subpage "i" of a huge PMD, on split. */
static inline pgprot_t pmd_pgprot(pmd_t pmd)
{
	return (pgprot_t){ pmd.pmd & ~(PTE_PFN_MASK | _PAGE_PSE) };
}
/* A PMD (or PUD/PGD) pointing to the table in frame "pfn". */
static inline pteval_t mk_table_entry(uint64_t pfn)
{
	return (pfn << PAGE_SHIFT) | _PAGE_TABLE;
}
static inline uint64_t table_pfn(pteval_t v)
{
	return (v & PTE_PFN_MASK) >> PAGE_SHIFT;
}

/* ---- indices ---- */
static inline unsigned pgd_index(uint64_t a) { return (a >> PGDIR_SHIFT) & (PTRS_PER_PGD - 1); }
static inline unsigned pud_index(uint64_t a) { return (a >> PUD_SHIFT) & (PTRS_PER_PUD - 1); }
static inline unsigned pmd_index(uint64_t a) { return (a >> PMD_SHIFT) & (PTRS_PER_PMD - 1); }
static inline unsigned pte_index(uint64_t a) { return (a >> PAGE_SHIFT) & (PTRS_PER_PTE - 1); }

static inline uint64_t pmd_addr_end(uint64_t addr, uint64_t end)
{
	uint64_t b = (addr + PMD_SIZE) & PMD_MASK;

	return (b - 1 < end - 1) ? b : end;
}
static inline uint64_t pud_addr_end(uint64_t addr, uint64_t end)
{
	uint64_t b = (addr + PUD_SIZE) & PUD_MASK;

	return (b - 1 < end - 1) ? b : end;
}
static inline uint64_t pgd_addr_end(uint64_t addr, uint64_t end)
{
	uint64_t b = (addr + PGDIR_SIZE) & ~(PGDIR_SIZE - 1);

	return (b - 1 < end - 1) ? b : end;
}

/* ---- walking: pointers into table frames ---- */
static inline pgd_t *pgd_offset(const struct mm_struct *mm, uint64_t addr)
{
	return (pgd_t *)pfn_address(mm->m, mm->pgd) + pgd_index(addr);
}
static inline pud_t *pud_offset(const struct thps_machine *m, const pgd_t *pgd, uint64_t addr)
{
	return (pud_t *)pfn_address(m, table_pfn(pgd->pgd)) + pud_index(addr);
}
static inline pmd_t *pmd_offset(const struct thps_machine *m, const pud_t *pud, uint64_t addr)
{
	return (pmd_t *)pfn_address(m, table_pfn(pud->pud)) + pmd_index(addr);
}
static inline pte_t *pte_offset(const struct thps_machine *m, const pmd_t *pmd, uint64_t addr)
{
	return (pte_t *)pfn_address(m, table_pfn(pmd->pmd)) + pte_index(addr);
}

/* Entries are read and written whole; another thread may walk them (the
 * checker, the shrinker), so use single loads and stores. */
static inline pte_t ptep_get(const pte_t *p) { return (pte_t){ READ_ONCE(p->pte) }; }
static inline pmd_t pmdp_get(const pmd_t *p) { return (pmd_t){ READ_ONCE(p->pmd) }; }
static inline void set_pte(pte_t *p, pte_t v) { WRITE_ONCE(p->pte, v.pte); }
/* set_ptes: nr entries from p on, mapping the frames that follow pte's
 * one after the other with its bits (include/linux/pgtable.h). */
static inline void set_ptes(pte_t *p, pte_t pte, int nr)
{
	for (int i = 0; i < nr; i++, pte.pte += PAGE_SIZE)
		set_pte(p + i, pte);
}
static inline void set_pmd(pmd_t *p, pmd_t v) { WRITE_ONCE(p->pmd, v.pmd); }
static inline void pte_clear(pte_t *p) { WRITE_ONCE(p->pte, 0); }
static inline void pmd_clear(pmd_t *p) { WRITE_ONCE(p->pmd, 0); }

#endif /* THPSIM_PGTABLE_H */
