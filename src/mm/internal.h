/*
 * internal.h - what the files of the model call of each other, grouped by the
 * file that defines it, plus the small inline helpers every file uses (page
 * flags, folios, fault codes, assertions).
 */
#ifndef THPSIM_INTERNAL_H
#define THPSIM_INTERNAL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgtable.h"
#include "types.h"

/* ---- assertions (mm/debug.c) ----
 * BUG_ON is always checked; VM_BUG_ON when THPS_DEBUG >= 1 (the default);
 * VM_BUG_ON_EXPENSIVE when THPS_DEBUG >= 2 (the test build).  Every form
 * type-checks its condition even when compiled out, and none has side
 * effects.  A failure dumps the page/VMA/mm it names, then aborts.
 */
#ifndef THPS_DEBUG
#define THPS_DEBUG 1
#endif
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

_Noreturn void bug_report(const char *file, int line, const char *cond, struct thps_machine *m,
			  const struct page *page, const struct vm_area_struct *vma,
			  const struct mm_struct *mm);
#define BUG_ON(c)                                                                          \
	do {                                                                               \
		if (unlikely(c))                                                           \
			bug_report(__FILE__, __LINE__, #c, NULL, NULL, NULL, NULL);        \
	} while (0)
#define VM_BUG_ON(c)                                                                       \
	do {                                                                               \
		if (THPS_DEBUG >= 1 && unlikely(c))                                        \
			bug_report(__FILE__, __LINE__, #c, NULL, NULL, NULL, NULL);        \
	} while (0)
#define VM_BUG_ON_PAGE(c, m, page)                                                         \
	do {                                                                               \
		if (THPS_DEBUG >= 1 && unlikely(c))                                        \
			bug_report(__FILE__, __LINE__, #c, (m), (page), NULL, NULL);       \
	} while (0)
#define VM_BUG_ON_VMA(c, vma)                                                              \
	do {                                                                               \
		if (THPS_DEBUG >= 1 && unlikely(c))                                        \
			bug_report(__FILE__, __LINE__, #c, (vma)->vm_mm->m, NULL, (vma),   \
				   (vma)->vm_mm);                                          \
	} while (0)
#define VM_BUG_ON_MM(c, mm)                                                                \
	do {                                                                               \
		if (THPS_DEBUG >= 1 && unlikely(c))                                        \
			bug_report(__FILE__, __LINE__, #c, (mm)->m, NULL, NULL, (mm));     \
	} while (0)
#define VM_BUG_ON_EXPENSIVE(c)                                                             \
	do {                                                                               \
		if (THPS_DEBUG >= 2 && unlikely(c))                                        \
			bug_report(__FILE__, __LINE__, #c, NULL, NULL, NULL, NULL);        \
	} while (0)

/* ---- page flags ---- */
static inline bool test_bit_flags(const struct page *p, int nr)
{
	return (__atomic_load_n(&p->flags, __ATOMIC_RELAXED) >> nr) & 1;
}
static inline void set_bit_flags(struct page *p, int nr)
{
	__atomic_fetch_or(&p->flags, 1U << nr, __ATOMIC_RELAXED);
}
static inline void clear_bit_flags(struct page *p, int nr)
{
	__atomic_fetch_and(&p->flags, ~(1U << nr), __ATOMIC_RELAXED);
}
/* Linux's test_bit_acquire and clear_bit_unlock: a flag whose clearing
 * publishes what the clearer did before it (see split_queue_del). */
static inline bool test_bit_flags_acquire(const struct page *p, int nr)
{
	return (__atomic_load_n(&p->flags, __ATOMIC_ACQUIRE) >> nr) & 1;
}
static inline void clear_bit_flags_release(struct page *p, int nr)
{
	__atomic_fetch_and(&p->flags, ~(1U << nr), __ATOMIC_RELEASE);
}
/*
 * The non-atomic forms (Linux's __SetPageFoo) are for frames nobody else can
 * reach: free frames under the allocator's locks, a frame being allocated or
 * freed.  A relaxed load and store instead of a locked read-modify-write;
 * concurrent readers still see a whole value.
 */
static inline void set_flags_nonatomic(struct page *p, uint32_t flags)
{
	__atomic_store_n(&p->flags, flags, __ATOMIC_RELAXED);
}
static inline void __set_bit_flags(struct page *p, int nr)
{
	set_flags_nonatomic(p, __atomic_load_n(&p->flags, __ATOMIC_RELAXED) | (1U << nr));
}
static inline void __clear_bit_flags(struct page *p, int nr)
{
	set_flags_nonatomic(p, __atomic_load_n(&p->flags, __ATOMIC_RELAXED) & ~(1U << nr));
}
#define PAGEFLAG(Name, bit)                                                                 \
	static inline bool Page##Name(const struct page *p) { return test_bit_flags(p, bit); } \
	static inline void SetPage##Name(struct page *p) { set_bit_flags(p, bit); }          \
	static inline void ClearPage##Name(struct page *p) { clear_bit_flags(p, bit); }      \
	static inline void __SetPage##Name(struct page *p) { __set_bit_flags(p, bit); }      \
	static inline void __ClearPage##Name(struct page *p) { __clear_bit_flags(p, bit); }
PAGEFLAG(Buddy, PG_buddy)
PAGEFLAG(Pcp, PG_pcp)
PAGEFLAG(Reserved, PG_reserved)
PAGEFLAG(Head, PG_head)
PAGEFLAG(Tail, PG_tail)
PAGEFLAG(Anon, PG_anon)
PAGEFLAG(AnonExclusive, PG_anon_exclusive)
PAGEFLAG(Table, PG_pgtable)
PAGEFLAG(HugeZero, PG_huge_zero)
PAGEFLAG(Zeroed, PG_zeroed)
PAGEFLAG(Nonzero, PG_nonzero)
#undef PAGEFLAG

/* ---- folios ---- */
static inline struct folio *page_folio(const struct thps_machine *m, const struct page *page)
{
	if (PageTail(page))
		return (struct folio *)&m->mem_map[page->compound_head];
	return (struct folio *)page;
}
static inline struct page *folio_page(struct folio *folio, long n)
{
	return (struct page *)folio + n;
}
/*
 * An order-0 page that only one process maps (PageAnonExclusive: fork,
 * the only way to share it, clears it under that process's lock).  Its
 * flags and mapcount change only under that lock, so a caller holding it
 * may update them with a plain load and store instead of a locked
 * read-modify-write.  Not its reference count: the deferred-split shrinker
 * drops its own reference to a folio it has just split into such pages
 * without that lock (deferred_split_scan).  Large folios are left out
 * altogether: the shrinker reaches them from other threads.
 */
static inline bool page_unshared(const struct page *page)
{
	uint32_t f = __atomic_load_n(&page->flags, __ATOMIC_RELAXED);

	return (f & (1U << PG_anon_exclusive)) && !(f & (1U << PG_head | 1U << PG_tail));
}

static inline bool folio_test_large(const struct folio *folio)
{
	return PageHead((const struct page *)folio);
}
static inline unsigned folio_order(const struct folio *folio)
{
	return folio_test_large(folio) ? folio->order : 0;
}
static inline long folio_nr_pages(const struct folio *folio)
{
	return 1L << folio_order(folio);
}
static inline bool folio_test_anon(const struct folio *folio)
{
	return PageAnon((const struct page *)folio);
}
static inline bool folio_test_pmd_mappable(const struct folio *folio)
{
	return folio_order(folio) >= HPAGE_PMD_ORDER;
}
static inline bool folio_test_partially_mapped(const struct folio *folio)
{
	return test_bit_flags((const struct page *)folio + 1, PG_partially_mapped);
}
static inline int folio_ref_count(const struct folio *folio)
{
	return atomic_read(&folio->_refcount);
}
static inline void folio_get(struct folio *folio)
{
	atomic_inc(&folio->_refcount);
}
static inline void folio_ref_add(struct folio *folio, int nr)
{
	atomic_add(nr, &folio->_refcount);
}
static inline int folio_entire_mapcount(const struct folio *folio)
{
	return atomic_read(&folio->_entire_mapcount);
}
/* Mappings of the folio by any page table: a PMD counts once. */
static inline int folio_mapcount(const struct folio *folio)
{
	if (!folio_test_large(folio))
		return atomic_read(&folio->_mapcount);
	return atomic_read(&folio->_large_mapcount);
}
static inline bool folio_mapped(const struct folio *folio)
{
	return folio_mapcount(folio) > 0;
}
static inline uint64_t folio_pfn(const struct thps_machine *m, const struct folio *folio)
{
	return page_to_pfn(m, (const struct page *)folio);
}

/* ---- allocation (mm/page_alloc.c) ---- */
typedef unsigned gfp_t;
#define __GFP_ZERO 0x01u      /* the frame(s) must read as zeros */
#define __GFP_COMP 0x02u      /* make a compound page (folio) */
#define __GFP_PGTABLE 0x04u   /* a page-table page: counted as such */
#define __GFP_RECLAIM 0x08u   /* may run the shrinkers and retry once */
#define __GFP_NOFAIL_INJ 0x10u /* not subject to failure injection (boot) */
#define __GFP_NORETRY 0x20u   /* memcg: one reclaim pass, no retries, no OOM kill */
#define GFP_KERNEL (__GFP_RECLAIM)
#define GFP_PGTABLE (__GFP_ZERO | __GFP_PGTABLE | __GFP_RECLAIM)
#define GFP_HIGHUSER_MOVABLE (__GFP_RECLAIM)
#define GFP_TRANSHUGE_LIGHT (__GFP_COMP)
#define GFP_TRANSHUGE (__GFP_COMP | __GFP_RECLAIM)

int page_alloc_init(struct thps_machine *m, uint64_t nr_frames);
void page_alloc_exit(struct thps_machine *m);
struct page *alloc_pages(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp, unsigned order);
static inline struct folio *folio_alloc(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp,
					unsigned order)
{
	return (struct folio *)alloc_pages(m, mm, gfp | (order ? __GFP_COMP : 0), order);
}
/* Order-0 frames as alloc_pages would give them while it needs no
 * reclaim; fewer (none for the rest) once it would. */
int alloc_pages_bulk(struct thps_machine *m, struct mm_struct *mm, gfp_t gfp, struct page **pages,
		     int n);
void free_pages(struct thps_machine *m, struct mm_struct *mm, struct page *page, unsigned order);
/* The buddy lists' own takers, zone lock held (tests compare the two):
 * the smallest free block split down to "order", and a frame cache filled
 * with "count" frames as that many order-0 calls would fill it. */
int64_t __rmqueue(struct thps_machine *m, unsigned order);
void rmqueue_bulk(struct thps_machine *m, uint32_t *stack, int *n, int count);
/* Drop a reference; frees the folio (or page) when it was the last. */
void folio_put(struct thps_machine *m, struct mm_struct *mm, struct folio *folio);
void folio_put_refs(struct thps_machine *m, struct mm_struct *mm, struct folio *folio, int refs);
/* Drop the references a zap gathered (mm's lock held, mm mapped them). */
#define FOLIO_BATCH_MAX 64
void folios_put_refs(struct thps_machine *m, struct mm_struct *mm, struct folio **folios,
		     const int *refs, int n);
void drain_pcp(struct thps_machine *m, struct mm_struct *mm);
/* An exiting process's cache goes to the pool of parked caches. */
void park_pcp(struct thps_machine *m, struct mm_struct *mm);
void drain_all_pages(struct thps_machine *m);
uint64_t nr_free_pages(struct thps_machine *m);
/* Turn a free-standing compound page into independent order-0 pages. */
void split_page_owner(struct thps_machine *m, struct folio *folio);
void clear_page_bytes(struct thps_machine *m, struct page *page);
void copy_page_bytes(struct thps_machine *m, struct page *dst, const struct page *src);
bool page_bytes_zero(struct thps_machine *m, const struct page *page);
/* The same, reading every byte whatever the flags say (the checker). */
bool page_bytes_zero_raw(struct thps_machine *m, const struct page *page);
/* Mark a frame whose bytes are about to be written. */
static inline void page_bytes_dirtied(struct page *page)
{
	if (PageZeroed(page))
		ClearPageZeroed(page);
}
/* Mark a frame a symbolic write (THPS_TOUCH_DIRTY) holds data in, its
 * bytes left as they are.  Caller holds the lock of a process mapping it
 * writable (page_unshared). */
static inline void page_bytes_symbolic(struct page *page)
{
	if (PageNonzero(page))
		return;
	if (page_unshared(page))
		__SetPageNonzero(page);
	else
		SetPageNonzero(page);
}

/* ---- counters (mm/vmstat.c) ---- */
/* Count in mm's share, or (mm NULL) the machine's own, atomically.
 * Inline: a fault counts three or four events. */
static inline void count_vm_events(struct thps_machine *m, struct mm_struct *mm, int item,
				   int64_t n)
{
	if (mm)
		local_add(&mm->stat.v[item], n);
	else
		__atomic_fetch_add(&m->stat.v[item], n, __ATOMIC_RELAXED);
}
static inline void count_vm_event(struct thps_machine *m, struct mm_struct *mm, int item)
{
	count_vm_events(m, mm, item, 1);
}
#define mod_node_page_state count_vm_events
/* hugepages-<size>kB/stats/ (count_mthp_stat, mod_mthp_stat): machine-wide,
 * atomic (Linux keeps them per CPU). */
static inline void mod_mthp_stat(struct thps_machine *m, int order, int item, int64_t n)
{
	if (order >= THPS_MTHP_MIN_ORDER && order <= HPAGE_PMD_ORDER)
		__atomic_fetch_add(&m->mthp_stat[order][item], n, __ATOMIC_RELAXED);
}
static inline void count_mthp_stat(struct thps_machine *m, int order, int item)
{
	mod_mthp_stat(m, order, item, 1);
}
void vmstat_fold_mm(struct thps_machine *m, struct mm_struct *mm);

static inline void add_mm_counter(struct mm_struct *mm, int member, int64_t value)
{
	local_add(&mm->rss_stat[member], value);
}
static inline int64_t get_mm_counter(const struct mm_struct *mm, int member)
{
	return READ_ONCE(mm->rss_stat[member]);
}
static inline int64_t get_mm_rss(const struct mm_struct *mm)
{
	return get_mm_counter(mm, MM_ANONPAGES);
}
/* Remember the peak before Rss goes down (include/linux/mm.h). */
static inline void update_hiwater_rss(struct mm_struct *mm)
{
	int64_t rss = get_mm_rss(mm);

	if (mm->hiwater_rss < rss)
		WRITE_ONCE(mm->hiwater_rss, rss);
}
static inline void mm_inc_nr_ptes(struct mm_struct *mm)
{
	local_add(&mm->pgtables_bytes, PTRS_PER_PTE * sizeof(pte_t));
}
static inline void mm_dec_nr_ptes(struct mm_struct *mm)
{
	local_add(&mm->pgtables_bytes, -(int64_t)(PTRS_PER_PTE * sizeof(pte_t)));
}

/* ---- page tables (mm/pgtable.c) ---- */
struct page *pte_alloc_one(struct mm_struct *mm);
void pte_free(struct mm_struct *mm, struct page *pgtable);
/* Walk to the PMD of addr, allocating PUD/PMD tables; NULL on -ENOMEM. */
pmd_t *pmd_alloc_walk(struct mm_struct *mm, uint64_t addr);
/* Walk without allocating; NULL where a level is missing. */
pmd_t *pmd_walk(const struct mm_struct *mm, uint64_t addr);
/* Install a PTE table under an empty PMD; -ENOMEM on failure. */
int __pte_alloc(struct mm_struct *mm, pmd_t *pmd);
void pgtable_trans_huge_deposit(struct mm_struct *mm, struct page *pgtable);
struct page *pgtable_trans_huge_withdraw(struct mm_struct *mm);
int pgd_alloc(struct mm_struct *mm);
void pgd_free(struct mm_struct *mm);
/* Free tables that map nothing in [floor, ceiling) around [addr, end). */
void free_pgd_range(struct mm_struct *mm, uint64_t addr, uint64_t end, uint64_t floor,
		    uint64_t ceiling);
/* Free the PTE table under pmd if every entry is none (CONFIG_PT_RECLAIM). */
bool try_to_free_pte(struct mm_struct *mm, pmd_t *pmd);

/* ---- a read-only page-table walk (mm/pagewalk.c) ---- */
struct mm_walk_ops {
	/* a huge PMD mapping addr's 2 MiB (NULL: skip them) */
	int (*pmd_entry)(struct vm_area_struct *vma, pmd_t pmd, uint64_t addr, void *arg);
	/* a present PTE */
	int (*pte_entry)(struct vm_area_struct *vma, pte_t pte, uint64_t addr, void *arg);
	/* or, instead (pte_entry NULL), the PTEs of [addr, addr + n pages) of
	 * one table at once, none entries included: for a walk that counts,
	 * or one whose caller holds the locks and changes the entries */
	int (*pte_range)(struct vm_area_struct *vma, pte_t *pte, unsigned n, uint64_t addr,
			 void *arg);
};
int walk_page_range_vma(struct vm_area_struct *vma, uint64_t start, uint64_t end,
			const struct mm_walk_ops *ops, void *arg);

/* ---- reverse map (mm/rmap.c) ---- */
void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma, uint64_t addr,
			     bool pmd);
void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma);
void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma);
void folio_add_anon_rmap_pmd(struct folio *folio, struct vm_area_struct *vma);
void folio_remove_rmap_pmd(struct folio *folio, struct vm_area_struct *vma);
/* fork: one more mapping of a page / a PMD-mapped folio, in vma's mm. */
void folio_dup_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *dst_vma);
void folio_dup_anon_rmap_pmd(struct folio *folio, struct vm_area_struct *dst_vma);
bool folio_maybe_mapped_shared(struct folio *folio);
/* The mm-id bookkeeping alone, for a split PMD turning into PTEs. */
void folio_add_large_mapcount(struct folio *folio, int diff, struct vm_area_struct *vma);
uint64_t vma_address(const struct vm_area_struct *vma, uint64_t pgoff);
/*
 * Visit every mapping of a folio in every process: fn gets the mm, VMA and
 * address; "huge" tells a PMD mapping.  Stops when fn returns nonzero.
 * Call between rmap_lock_all() (every process but "held" locked with
 * trylock; -EBUSY when one is busy) and rmap_unlock_all().  fn must not
 * allocate (drain_all_pages takes the process list lock).
 */
typedef int (*rmap_fn)(struct mm_struct *mm, struct vm_area_struct *vma, uint64_t addr,
		       bool huge, void *arg);
int rmap_lock_all(struct thps_machine *m, struct mm_struct *held);
void rmap_unlock_all(struct thps_machine *m, struct mm_struct *held);
/* Pages [pfn, pfn + nr) holding linear indices [index, index + nr). */
struct rmap_range {
	uint64_t index, nr, pfn;
};
/* Does the PTE map one of r's pages (present, not the zero page)? */
static inline bool rmap_range_maps(const struct rmap_range *r, pte_t e)
{
	return pte_present(e) && !pte_special(e) && pte_pfn(e) >= r->pfn &&
	       pte_pfn(e) < r->pfn + r->nr;
}
struct rmap_range rmap_folio_range(struct thps_machine *m, struct folio *folio);
int rmap_walk_locked(struct thps_machine *m, const struct rmap_range *r, rmap_fn fn, void *arg);
/*
 * The same walk a page table at a time, for work on many PTEs of a folio
 * split to order 0: fn gets the PTEs of [addr, addr + n pages) of one
 * table that lie in the folio's range, none, special and others' entries
 * included (fn picks the folio's out with rmap_range_maps); huge PMDs are
 * skipped.
 */
typedef int (*rmap_table_fn)(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pte,
			     unsigned n, uint64_t addr, const struct rmap_range *r, void *arg);
int rmap_walk_tables_locked(struct thps_machine *m, const struct rmap_range *r,
			    rmap_table_fn fn, void *arg);

/* ---- VMAs (mm/vma.c) ---- */
struct vm_area_struct *vm_area_alloc(struct mm_struct *mm);
struct vm_area_struct *vm_area_dup(struct vm_area_struct *orig);
void vm_area_free(struct vm_area_struct *vma);
/* First VMA with vm_end > addr, or NULL. */
struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr);
/* The VMA containing addr, or NULL. */
void vma_expand_down(struct vm_area_struct *vma, uint64_t start);
struct vm_area_struct *vma_lookup(struct mm_struct *mm, uint64_t addr);
/* The VMA containing addr, without touching the lookup cache. */
const struct vm_area_struct *vma_find_const(const struct mm_struct *mm, uint64_t addr);
void vma_link(struct mm_struct *mm, struct vm_area_struct *vma);
void vma_unlink(struct mm_struct *mm, struct vm_area_struct *vma);
/* Split vma at addr: the new VMA is the part above addr when new_below is 0. */
int split_vma(struct vm_area_struct *vma, uint64_t addr, int new_below);
/* Merge vma with its neighbours where Linux would; returns the result. */
struct vm_area_struct *vma_merge_neighbours(struct vm_area_struct *vma);
/* Give [start, end) of vma (which must contain it) the flags new_flags. */
struct vm_area_struct *vma_modify_flags(struct vm_area_struct *vma, uint64_t start, uint64_t end,
					uint64_t new_flags, int *err);
int anon_vma_prepare(struct vm_area_struct *vma);
bool vma_tree_check(struct mm_struct *mm, char *err, size_t errlen);

/* ---- mmap (mm/mmap.c) ---- */
pgprot_t vm_get_page_prot(uint64_t vm_flags);
void vma_set_page_prot(struct vm_area_struct *vma);
static inline pte_t maybe_mkwrite(pte_t pte, const struct vm_area_struct *vma)
{
	return (vma->vm_flags & VM_WRITE) ? pte_mkwrite(pte) : pte;
}
static inline pmd_t maybe_pmd_mkwrite(pmd_t pmd, const struct vm_area_struct *vma)
{
	return (vma->vm_flags & VM_WRITE) ? pmd_mkwrite(pmd) : pmd;
}
int do_munmap(struct mm_struct *mm, uint64_t start, uint64_t len);
void exit_mmap(struct mm_struct *mm);
struct vm_area_struct *expand_stack(struct mm_struct *mm, uint64_t addr);
uint64_t get_unmapped_area(struct mm_struct *mm, uint64_t len, bool thp_align);
void mmap_init_layout(struct mm_struct *mm);
int machine_error(struct thps_machine *m, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- faults, zap, fork copy (mm/memory.c) ---- */
#define FAULT_FLAG_WRITE 0x01u
#define FAULT_FLAG_USER 0x02u

typedef unsigned vm_fault_t;
#define VM_FAULT_OOM 0x0001u
#define VM_FAULT_SIGSEGV 0x0002u
#define VM_FAULT_FALLBACK 0x0800u

struct vm_fault {
	struct vm_area_struct *vma;
	uint64_t address;      /* faulting address, page aligned */
	unsigned flags;        /* FAULT_FLAG_* */
	pmd_t *pmd;
	pmd_t orig_pmd;
	pte_t *pte;
	pte_t orig_pte;
};
vm_fault_t handle_mm_fault(struct vm_area_struct *vma, uint64_t address, unsigned flags);
vm_fault_t handle_mm_fault_pmd(struct vm_area_struct *vma, uint64_t address, unsigned flags,
			       pmd_t *pmd);
vm_fault_t do_wp_page(struct vm_fault *vmf);
/* The first-touch faults of consecutive pages in one PTE table, together. */
int handle_pte_fault_run(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, uint64_t end,
			 bool write);
/* The struct page a PTE maps, or NULL for the zero page (special). */
struct page *vm_normal_page(struct vm_area_struct *vma, pte_t pte);
struct page *vm_normal_page_pmd(struct vm_area_struct *vma, pmd_t pmd);
/* How many entries from pte on map folio's pages in order from page. */
int folio_pte_batch(struct thps_machine *m, struct folio *folio, struct page *page, pte_t *pte,
		    uint64_t max);
/* Zap [start, end) inside one VMA (munmap, MADV_DONTNEED, exit). */
void zap_page_range_vma(struct vm_area_struct *vma, uint64_t start, uint64_t end,
			bool reclaim_pt);
/* fork: copy the page tables of src_vma into dst_vma. */
int copy_page_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma);
static inline bool is_zero_pfn(const struct thps_machine *m, uint64_t pfn)
{
	return pfn == m->zero_pfn;
}

/* ---- THP (mm/huge_memory.c) ---- */
static inline bool is_huge_zero_pfn(const struct thps_machine *m, uint64_t pfn)
{
	return pfn == READ_ONCE(m->huge_zero_pfn);
}
static inline bool is_huge_zero_pmd(const struct thps_machine *m, pmd_t pmd)
{
	return pmd_present(pmd) && is_huge_zero_pfn(m, pmd_pfn(pmd));
}
void huge_memory_init(struct thps_machine *m);
void huge_memory_exit(struct thps_machine *m);
unsigned long thp_vma_allowable_orders(struct vm_area_struct *vma, uint64_t vm_flags,
				       unsigned long orders);
bool thp_vma_allowable_order(struct vm_area_struct *vma, uint64_t vm_flags, int order);
bool thp_vma_suitable_order(const struct vm_area_struct *vma, uint64_t addr, int order);
unsigned long thp_vma_suitable_orders(const struct vm_area_struct *vma, uint64_t addr,
				      unsigned long orders);
gfp_t vma_thp_gfp_mask(struct vm_area_struct *vma);
/* Walking a mask of orders from the highest down (include/linux/huge_mm.h). */
static inline int highest_order(unsigned long orders)
{
	return 63 - __builtin_clzl(orders);
}
static inline unsigned long next_order(unsigned long orders, int prev)
{
	return orders & ~(1UL << prev);
}
/* The anonymous folio orders below the PMD's (16 KiB .. 1 MiB). */
#define THP_ORDERS_BELOW_PMD (((1UL << HPAGE_PMD_ORDER) - 1) & ~((1UL << THPS_MTHP_MIN_ORDER) - 1))
vm_fault_t do_huge_pmd_anonymous_page(struct vm_fault *vmf);
vm_fault_t do_huge_pmd_wp_page(struct vm_fault *vmf);
/* Zap a huge PMD; false when it is not huge (take the PTE path). */
bool zap_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr);
int copy_huge_pmd(struct mm_struct *dst_mm, struct mm_struct *src_mm, pmd_t *dst_pmd,
		  pmd_t *src_pmd, uint64_t addr, struct vm_area_struct *dst_vma,
		  struct vm_area_struct *src_vma);
/* mprotect of a whole huge PMD: 1 done, 0 not huge. */
int change_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t addr, pgprot_t newprot,
		    bool try_writable);
bool move_huge_pmd(struct vm_area_struct *vma, uint64_t old_addr, uint64_t new_addr,
		   pmd_t *old_pmd, pmd_t *new_pmd);
void __split_huge_pmd(struct vm_area_struct *vma, pmd_t *pmd, uint64_t address);
void split_huge_pmd_address(struct vm_area_struct *vma, uint64_t address);
/* Split huge PMDs straddling start or end before a VMA boundary moves. */
void vma_adjust_trans_huge(struct vm_area_struct *vma, uint64_t start, uint64_t end);
void deferred_split_folio(struct thps_machine *m, struct mm_struct *mm, struct folio *folio,
			  bool partially_mapped);
void folio_undo_large_rmappable(struct thps_machine *m, struct folio *folio);
/* Split a THP into 4 KiB pages now; "held" is the caller's locked mm. */
int split_folio(struct thps_machine *m, struct folio *folio, struct mm_struct *held);
/* Huge zero folio lifetime. */
struct folio *mm_get_huge_zero_folio(struct mm_struct *mm);
void mm_put_huge_zero_folio(struct mm_struct *mm);
void put_huge_zero_folio(struct thps_machine *m);
bool get_huge_zero_folio(struct thps_machine *m, struct mm_struct *mm);
/* Per-mapping reference under the 3.8 lifetime; nothing otherwise. */
void huge_zero_map_put(struct thps_machine *m);
/* Shrinkers. */
unsigned long shrink_huge_zero_page_count(struct thps_machine *m);
unsigned long shrink_huge_zero_page_scan(struct thps_machine *m);
unsigned long deferred_split_count(struct thps_machine *m);
unsigned long deferred_split_scan(struct thps_machine *m, struct mm_struct *held,
				  unsigned long nr_to_scan);

/* ---- collapse (mm/khugepaged.c) ---- */
/* MADV_COLLAPSE over [start, end) of vma: 0 or the call's errno. */
int madvise_collapse(struct vm_area_struct *vma, uint64_t start, uint64_t end);
/* khugepaged's mm slots: vma (with flags vm_flags) may now be scanned; a
 * child of a registered mm; an mm going away.  mm lock held. */
void khugepaged_enter_vma(struct vm_area_struct *vma, uint64_t vm_flags);
void khugepaged_fork(struct mm_struct *mm, struct mm_struct *oldmm);
void khugepaged_exit(struct mm_struct *mm);

/* ---- reclaim (mm/vmscan.c) ---- */
/* Run every shrinker; "held" is the caller's locked mm, or NULL. */
unsigned long shrink_slab(struct thps_machine *m, struct mm_struct *held);

/* ---- mprotect (mm/mprotect.c) ---- */
int mprotect_fixup(struct vm_area_struct *vma, struct vm_area_struct **pprev, uint64_t start,
		   uint64_t end, uint64_t newflags);

/* ---- processes (mm/fork.c: kernel/fork.c, kernel/exit.c) ---- */
int mm_init(struct thps_machine *m, struct mm_struct *mm);
void mmput(struct mm_struct *mm);

/* ---- knobs (mm/sysfs.c) ---- */
void knobs_init(struct knobs *k);
static inline struct knobs knobs_read(struct thps_machine *m)
{
	struct knobs k;

	spin_lock(&m->knob_lock);
	k = m->knobs;
	spin_unlock(&m->knob_lock);
	return k;
}
#define KNOB(m, field) READ_ONCE((m)->knobs.field)

/* ---- figures (mm/task_mmu.c) ---- */

/* ---- the memory cgroup (mm/memcontrol.c, mm/oom_kill.c) ---- */
void mem_cgroup_init(struct thps_machine *m);
void mem_cgroup_exit(struct thps_machine *m);
/* Charge a new folio (all its frames) or page-table page: 0 or -ENOMEM. */
int mem_cgroup_charge(struct thps_machine *m, struct mm_struct *mm, struct page *page, gfp_t gfp);
static inline int mem_cgroup_charge_folio(struct folio *folio, struct mm_struct *mm, gfp_t gfp)
{
	return mem_cgroup_charge(mm->m, mm, (struct page *)folio, gfp);
}
/* The first of n order-0 pages that fit without reclaim: how many. */
int mem_cgroup_charge_bulk(struct thps_machine *m, struct page **pages, int n);
/* kmem: a page table's (to the stock), else a folio's. */
void mem_cgroup_uncharge(struct thps_machine *m, uint64_t nr, bool kmem);
bool mem_cgroup_out_of_memory(struct thps_machine *m, struct mm_struct *held);
/* folio_prealloc (memory.c): an order-0 folio, allocated and charged
 * (GFP_KERNEL: reclaim, retries, the OOM killer); NULL is VM_FAULT_OOM. */
struct folio *folio_prealloc(struct mm_struct *mm, gfp_t gfp);
/* The machine's OOM killer (totalpages: its RAM). */
bool out_of_memory(struct thps_machine *m, struct mm_struct *held);

/* ---- checker (mm/debug.c) ---- */
void dump_page(struct thps_machine *m, const struct page *page);
void dump_vma(const struct vm_area_struct *vma);
void dump_mm(const struct mm_struct *mm);

/* mm->flags bits (MMF_*) another process may set (the OOM killer marks
 * its victim without the victim's lock): atomic. */
static inline bool mm_flag_test(const struct mm_struct *mm, int bit)
{
	return __atomic_load_n(&mm->flags, __ATOMIC_RELAXED) & (1UL << bit);
}
static inline void mm_flag_set(struct mm_struct *mm, int bit)
{
	__atomic_fetch_or(&mm->flags, 1UL << bit, __ATOMIC_RELAXED);
}

static inline void mm_lock(struct mm_struct *mm)
{
	spin_lock(&mm->lock);
}
static inline void mm_unlock(struct mm_struct *mm)
{
	spin_unlock(&mm->lock);
}

#endif /* THPSIM_INTERNAL_H */
