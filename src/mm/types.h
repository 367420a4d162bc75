/*
 * types.h - every structure of the model, and the constants that size them.
 *
 * The names are Linux's (include/linux/mm_types.h, arch/x86's pgtable
 * types, include/linux/mmzone.h) so that a reader who knows the kernel finds
 * each thing where she expects it.  What the model leaves out of a kernel
 * structure is simply absent; what it adds is marked "model:".
 *
 * Sizes derive from shifts: a 4 KiB page is 1 << PAGE_SHIFT, a PMD maps
 * 1 << PMD_SHIFT, a huge page has HPAGE_PMD_NR subpages.
 */
#ifndef THPSIM_TYPES_H
#define THPSIM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomic.h"
#include "thpsim.h"

/* ---- geometry: x86-64, four levels, 48-bit virtual addresses ---- */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define PMD_SHIFT 21
#define PMD_SIZE (1UL << PMD_SHIFT)
#define PMD_MASK (~(PMD_SIZE - 1))
#define PUD_SHIFT 30
#define PUD_SIZE (1UL << PUD_SHIFT)
#define PUD_MASK (~(PUD_SIZE - 1))
#define PGDIR_SHIFT 39
#define PGDIR_SIZE (1UL << PGDIR_SHIFT)
#define PTRS_PER_PTE (1 << (PMD_SHIFT - PAGE_SHIFT))
#define PTRS_PER_PMD (1 << (PUD_SHIFT - PMD_SHIFT))
#define PTRS_PER_PUD (1 << (PGDIR_SHIFT - PUD_SHIFT))
#define PTRS_PER_PGD (1 << (48 - PGDIR_SHIFT))
#define TASK_SIZE ((1UL << 47) - PAGE_SIZE)

#define HPAGE_PMD_SHIFT PMD_SHIFT
#define HPAGE_PMD_ORDER (HPAGE_PMD_SHIFT - PAGE_SHIFT)
#define HPAGE_PMD_NR (1 << HPAGE_PMD_ORDER)
#define HPAGE_PMD_SIZE (1UL << HPAGE_PMD_SHIFT)
#define HPAGE_PMD_MASK (~(HPAGE_PMD_SIZE - 1))

/* The buddy allocator's largest block, as on x86-64 (4 MiB). */
#define MAX_PAGE_ORDER 10
#define NR_PAGE_ORDERS (MAX_PAGE_ORDER + 1)

#define PAGE_ALIGN(x) (((x) + PAGE_SIZE - 1) & PAGE_MASK)
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define ALIGN_UP(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((uint64_t)(a) - 1)) == 0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A frame number that names no frame (free-list ends, no huge zero page). */
#define NO_PFN ((uint32_t)~0U)

/* ---- page-table entries (arch/x86/include/asm/pgtable_types.h) ---- */
typedef uint64_t pteval_t;
typedef struct { pteval_t pte; } pte_t;
typedef struct { pteval_t pmd; } pmd_t;
typedef struct { pteval_t pud; } pud_t;
typedef struct { pteval_t pgd; } pgd_t;
typedef struct { pteval_t pgprot; } pgprot_t;

#define _PAGE_BIT_PRESENT 0
#define _PAGE_BIT_RW 1
#define _PAGE_BIT_USER 2
#define _PAGE_BIT_ACCESSED 5
#define _PAGE_BIT_DIRTY 6
#define _PAGE_BIT_PSE 7     /* a PMD that maps 2 MiB */
#define _PAGE_BIT_GLOBAL 8  /* doubles as PROTNONE when not present */
#define _PAGE_BIT_SPECIAL 9 /* software bit 1: no struct page to count */
#define _PAGE_BIT_NX 63

#define _PAGE_PRESENT (1ULL << _PAGE_BIT_PRESENT)
#define _PAGE_RW (1ULL << _PAGE_BIT_RW)
#define _PAGE_USER (1ULL << _PAGE_BIT_USER)
#define _PAGE_ACCESSED (1ULL << _PAGE_BIT_ACCESSED)
#define _PAGE_DIRTY (1ULL << _PAGE_BIT_DIRTY)
#define _PAGE_PSE (1ULL << _PAGE_BIT_PSE)
#define _PAGE_PROTNONE (1ULL << _PAGE_BIT_GLOBAL)
#define _PAGE_SPECIAL (1ULL << _PAGE_BIT_SPECIAL)
#define _PAGE_NX (1ULL << _PAGE_BIT_NX)
#define PTE_PFN_MASK 0x000ffffffffff000ULL
/* Bits pte_modify() keeps: the frame and the state hardware or the fault
 * handler set (arch/x86 _PAGE_CHG_MASK). */
#define _PAGE_CHG_MASK (PTE_PFN_MASK | _PAGE_ACCESSED | _PAGE_DIRTY | _PAGE_SPECIAL)
#define _HPAGE_CHG_MASK (_PAGE_CHG_MASK | _PAGE_PSE)
/* A table entry pointing to a lower-level table. */
#define _PAGE_TABLE (_PAGE_PRESENT | _PAGE_RW | _PAGE_USER | _PAGE_ACCESSED | _PAGE_DIRTY)

/* ---- VMA flags (include/linux/mm.h) ---- */
#define VM_NONE 0x00000000UL
#define VM_READ 0x00000001UL
#define VM_WRITE 0x00000002UL
#define VM_EXEC 0x00000004UL
#define VM_SHARED 0x00000008UL
#define VM_MAYREAD 0x00000010UL
#define VM_MAYWRITE 0x00000020UL
#define VM_MAYEXEC 0x00000040UL
#define VM_GROWSDOWN 0x00000100UL
#define VM_LOCKED 0x00002000UL
#define VM_ACCOUNT 0x00100000UL
#define VM_NORESERVE 0x00200000UL
#define VM_HUGEPAGE 0x20000000UL
#define VM_NOHUGEPAGE 0x40000000UL
#define VM_ACCESS_FLAGS (VM_READ | VM_WRITE | VM_EXEC)
/* Flags that must match for two VMAs to merge (all but these). */
#define VM_IGNORE_MERGE 0UL

/* ---- frame metadata (struct page / struct folio) ---- */

/* Page flags.  Bit operations on them are atomic. */
enum pageflags {
	PG_buddy,            /* head of a free block in the buddy lists */
	PG_pcp,              /* a free frame parked in a per-process cache */
	PG_reserved,         /* the shared zero page: never allocated or freed */
	PG_head,             /* first frame of a compound page (folio) */
	PG_tail,             /* any other frame of a compound page */
	PG_anon,             /* anonymous memory: on head or order-0 page */
	PG_anon_exclusive,   /* per page: mapped by exactly one process */
	PG_pgtable,          /* a page-table page */
	PG_huge_zero,        /* the huge zero folio (head) */
	PG_zeroed,           /* model: the frame's bytes are known to be zero */
	PG_nonzero,          /* model: holds data the model did not store (a
				THPS_TOUCH_DIRTY write): never zero-filled */
	PG_partially_mapped, /* folio (in page[1]): queued as partially mapped */
	PG_deferred,         /* folio (in page[1]): on the deferred-split queue */
	PG_mapcount_lock,    /* folio (in page[1]): bit lock for the mm-id slots */
	PG_memcg,            /* every frame of a folio or page-table page charged to
				the memory cgroup (memcontrol.c): uncharged when freed */
	NR_PAGEFLAGS
};

/*
 * struct page: 32 bytes per 4 KiB frame.  Large folios keep their extra
 * fields in the metadata of their second and third frames, as Linux's
 * struct folio overlays page[0..3].  _mapcount counts from 0 (Linux
 * counts from -1).
 */
struct page {
	uint32_t flags;     /* PG_* bits */
	atomic_t _refcount; /* head or order-0: mappings plus transient refs */
	atomic_t _mapcount; /* PTE mappings of this very page */
	uint8_t order;      /* PG_buddy: block order; PG_head: folio order */
	uint8_t _pad[3];
	struct {
		uint32_t next, prev; /* buddy list, deposit stack */
	} lru;
	union {
		uint64_t index;         /* head/order-0 anon: linear page index */
		uint32_t compound_head; /* tail: pfn of the head */
	};
};

/*
 * struct folio: a view of page[0..2] of a large folio.  Offsets are checked
 * against struct page in page_alloc.c.
 */
struct folio {
	/* page[0] */
	uint32_t flags;
	atomic_t _refcount;
	atomic_t _mapcount;
	uint8_t order;
	uint8_t _pad0[3];
	struct {
		uint32_t next, prev;
	} lru;
	uint64_t index;
	/* page[1] */
	uint32_t _flags_1;
	atomic_t _entire_mapcount;  /* PMD mappings */
	atomic_t _mapcount_1;       /* page[1]'s own PTE mapcount */
	atomic_t _nr_pages_mapped;  /* pages mapped by some PTE, + ENTIRELY_MAPPED */
	struct {
		uint32_t next, prev;
	} _deferred_list;           /* deferred-split queue links */
	uint32_t _head_1;
	atomic_t _large_mapcount;   /* all mappings: a PMD counts 1, a PTE 1 */
	/* page[2] */
	uint32_t _flags_2;
	uint32_t _mm_id_0;          /* up to two address spaces that map it... */
	atomic_t _mapcount_2;
	uint32_t _mm_id_1;
	int32_t _mm_id_mapcount[2]; /* ...and the mappings each of them holds */
	uint32_t _head_2;
	uint32_t _mm_ids_shared;    /* maybe mapped by more than one mm */
};

/* _nr_pages_mapped carries this once any PMD maps the folio. */
#define ENTIRELY_MAPPED 0x800000
#define FOLIO_PAGES_MAPPED (ENTIRELY_MAPPED - 1)

/* ---- buddy allocator (include/linux/mmzone.h) ---- */
struct free_area {
	uint32_t head; /* first free block of this order, or NO_PFN */
	uint64_t nr_free;
};

struct zone {
	spinlock_t lock;
	struct free_area free_area[NR_PAGE_ORDERS];
	uint64_t wilderness;    /* model: frames from here on were never handed out */
	uint64_t nr_free_pages; /* free frames on the lists and in the wilderness */
	uint64_t metadata_committed; /* model: frames whose metadata the host committed */
};

/*
 * Per-process cache of free order-0 frames (Linux keeps one per CPU).  The
 * last frame in is the first out, as at the head of Linux's list; the model
 * keeps the frames in an array (a stack), so caching one writes no other
 * frame's metadata.  A free that takes it over PCP_HIGH gives PCP_BATCH
 * back, so it never holds more than PCP_HIGH + 1.
 */
#define PCP_BATCH 63
#define PCP_HIGH 256
struct per_cpu_pages {
	raw_spinlock_t lock;
	int count;
	uint32_t pfn[PCP_HIGH + 1]; /* pfn[count - 1] is the next out */
};

/*
 * model: the caches of exited processes, kept for new ones.  Linux's
 * per-CPU lists outlive the tasks that fill them, so a task that exits and
 * the next one on that CPU pass frames on without the zone lock; here an
 * exiting process parks its cache and a new one adopts it when its own runs
 * dry.  Bounded (PCP_POOL_HIGH frames, PCP_POOL_LISTS lists), and only
 * caches that cannot keep huge pages from forming are parked (park_pcp);
 * anything else goes back to the buddy lists, as does everything when an
 * allocation finds the lists empty or reclaim drains the caches.
 */
#define PCP_POOL_LISTS 16
#define PCP_POOL_HIGH (4 * PCP_HIGH)
struct pcp_pool {
	spinlock_t lock;
	int nr;        /* parked lists */
	int64_t count; /* frames on them */
	struct {
		int count;
		uint32_t pfn[PCP_HIGH + 1]; /* as in struct per_cpu_pages */
	} list[PCP_POOL_LISTS];
};

/* ---- counters ---- */
/*
 * vm_event and vm_stat items that change in a process's context are kept per
 * process (owned by its lock) and folded into the machine's totals when it
 * exits, the way Linux keeps them per CPU.
 */
struct vm_counters {
	int64_t v[THPS_NR_VM_ITEMS];
};

enum {
	MM_ANONPAGES,
	NR_MM_COUNTERS
};

/* ---- address spaces ---- */
struct mm_struct;

struct vm_area_struct {
	uint64_t vm_start, vm_end; /* [vm_start, vm_end) */
	uint64_t vm_flags;
	uint64_t vm_pgoff;         /* linear page index of vm_start (rmap) */
	pgprot_t vm_page_prot;     /* entry bits the flags give */
	struct mm_struct *vm_mm;
	uint64_t anon_vma;         /* model: identity of the anon_vma; 0 = none */
	bool anon_vma_chained;     /* model: inherited through fork (chain > 1) */
	/* AVL tree ordered by vm_start, and the sorted list */
	struct vm_area_struct *left, *right, *parent;
	int height;
	struct vm_area_struct *vm_prev, *vm_next;
};

/* mm->flags bits */
enum {
	MMF_HUGE_ZERO_FOLIO,            /* holds a huge zero page reference */
	MMF_DISABLE_THP_COMPLETELY,     /* prctl(PR_SET_THP_DISABLE, 1) */
	MMF_DISABLE_THP_EXCEPT_ADVISED, /* ... with PR_THP_DISABLE_EXCEPT_ADVISED */
	MMF_VM_HUGEPAGE,                /* registered with khugepaged (has an mm slot) */
	MMF_OOM_VICTIM,                 /* chosen by the OOM killer (oom_kill.c) */
	MMF_OOM_SKIP,                   /* ... and reaped: nothing more to take */
};

struct mm_struct {
	struct thps_machine *m;
	spinlock_t lock;          /* mmap_lock and every page-table lock */
	uint32_t pgd;             /* pfn of the top-level table */
	uint32_t mm_id;           /* nonzero id for folio mm-id slots */
	struct vm_area_struct *mm_rb;   /* AVL root */
	struct vm_area_struct *mmap;    /* first VMA */
	struct vm_area_struct *mmap_cache; /* last VMA found */
	int map_count;
	int64_t rss_stat[NR_MM_COUNTERS];
	int64_t hiwater_rss;      /* pages */
	int64_t total_vm;         /* pages */
	int64_t pgtables_bytes;   /* VmPTE: PTE, PMD and PUD tables */
	int64_t fault_run_pages;  /* tests: pages faulted by fault runs */
	unsigned long flags;      /* MMF_* */
	uint64_t mmap_base;
	uint64_t start_brk, brk;
	uint64_t stack_rlimit;    /* RLIMIT_STACK: how far a stack VMA may grow */
	uint32_t deposit_head;    /* stack of deposited PTE tables (pmd_huge_pte) */
	int64_t nr_deposited;
	struct per_cpu_pages pcp;
	struct vm_counters stat;  /* this process's share of /proc/vmstat */
	uint64_t next_anon_vma;   /* model: anon_vma ids */
	struct mm_struct *khugepaged_next; /* khugepaged's mm slot list, in registration order */
	uint64_t fault_addr;      /* the fault in progress (memcontrol.c's reclaim leaves
				     its 2 MiB alone); FAULT_ADDR_NONE outside one */
};
#define FAULT_ADDR_NONE UINT64_MAX

/* ---- the machine ---- */
enum thp_enabled { THP_ALWAYS, THP_MADVISE, THP_NEVER, THP_INHERIT };
enum thp_defrag { DEFRAG_ALWAYS, DEFRAG_DEFER, DEFRAG_DEFER_MADVISE, DEFRAG_MADVISE, DEFRAG_NEVER };

/* Huge zero page lifetimes (model knob thpsim/huge_zero_page_lifetime). */
enum hzp_lifetime {
	HZP_REFCOUNT,   /* Linux 3.8-4.8: a global reference per mapping */
	HZP_PER_MM,     /* Linux 4.9+: one reference per address space */
	HZP_PERSISTENT, /* allocated once (lazily), never freed */
};

/* Write fault on a huge zero PMD (model knob thpsim/huge_zero_wp). */
enum hzp_wp {
	HZP_WP_ALLOC_OR_PTE,   /* Linux 3.8-5.7: new THP; else a PTE table */
	HZP_WP_SPLIT,          /* Linux 5.8-6.12: split the PMD, copy 4 KiB */
	HZP_WP_ALLOC_OR_SPLIT, /* Linux 6.13+: new THP; else split */
};

/* Write fault on a THP shared after fork (model knob thpsim/thp_cow). */
enum thp_cow {
	THP_COW_COPY,  /* Linux 3.8-5.7: copy the whole huge page */
	THP_COW_SPLIT, /* Linux 5.8+: split the PMD, copy 4 KiB */
};

/* When a large anonymous folio joins the deferred split queue (and
 * thp_deferred_split_page counts): model knob thpsim/deferred_split. */
enum deferred_split_when {
	DEFERRED_SPLIT_UNMAP_AND_SPLIT, /* Linux 3.8-6.1: unmap, and a split's unmapping */
	DEFERRED_SPLIT_UNMAP,   /* Linux 6.2-6.9: any page losing its last mapping */
	DEFERRED_SPLIT_PARTIAL, /* Linux 6.10+: only a folio left partially mapped */
};

/* thpsim/anon_thp_align: which anonymous mmaps without an address get a 2 MiB
 * boundary (__get_unmapped_area, thp_get_unmapped_area) */
enum anon_thp_align {
	ANON_THP_ALIGN_NONE,         /* Linux 3.8-6.6 */
	ANON_THP_ALIGN_PMD_OR_LARGER, /* Linux 6.7-6.11: a length of 2 MiB or more */
	ANON_THP_ALIGN_PMD_MULTIPLE, /* Linux 6.12+: a multiple of 2 MiB */
};

#define KERNEL_VERSION(a, b) ((a) * 256 + (b))

struct knobs {
	int enabled;          /* enum thp_enabled */
	/* hugepages-<size>kB/enabled by order (2 .. HPAGE_PMD_ORDER): enum
	 * thp_enabled; the PMD order's is hugepages-2048kB/enabled */
	int hugepages_enabled[HPAGE_PMD_ORDER + 1];
	int defrag;           /* enum thp_defrag */
	int use_zero_page;
	int shrink_underused;
	int max_ptes_none;
	int max_ptes_shared;  /* khugepaged/max_ptes_shared */
	int max_ptes_swap;    /* khugepaged/max_ptes_swap (no swap here: accepted, unused) */
	int pages_to_scan;    /* khugepaged/pages_to_scan: per wake-up */
	int scan_sleep_millisecs;  /* khugepaged/: between wake-ups */
	int alloc_sleep_millisecs; /* khugepaged/: after a failed THP allocation */
	int khugepaged_defrag;     /* khugepaged/defrag: may its allocation reclaim */
	int hzp_lifetime;     /* enum hzp_lifetime */
	int hzp_wp;           /* enum hzp_wp */
	int thp_cow;          /* enum thp_cow */
	/* kernel-profile items (sysfs.c: profile_changes) */
	int zero_page;        /* thpsim/zero_page: 0 where mm_forbids_zeropage */
	int pt_reclaim;       /* thpsim/pt_reclaim: CONFIG_PT_RECLAIM */
	int split_remap_zero; /* thpsim/split_remap_zero: RMP_USE_SHARED_ZEROPAGE */
	int underused_shrinker; /* thpsim/underused_shrinker: thp_underused */
	int mprotect_pmd_writable; /* thpsim/mprotect_pmd_writable */
	int deferred_split;   /* enum deferred_split_when */
	int collapse_ro;      /* thpsim/collapse_ro: collapse with no writable PTE */
	int collapse_pte_batch; /* thpsim/collapse_pte_batch: unmap a folio's run at once */
	int mthp;             /* thpsim/mthp: faults map folios of the sizes below 2 MiB */
	int wp_reuse_large;   /* thpsim/wp_reuse_large: a write fault may reuse a page of a
				 PTE-mapped large folio mapped only by this process */
	int anon_thp_align;   /* enum anon_thp_align: which mmaps get a 2 MiB-aligned address */
	int map_stack_nohugepage; /* thpsim/map_stack_nohugepage: MAP_STACK sets VM_NOHUGEPAGE */
	int kernel;           /* thpsim/kernel: KERNEL_VERSION(a, b) last set */
};

struct fail_inject {
	uint64_t count[THPS_NR_ALLOC_CLASSES]; /* allocations made */
	uint64_t fail_at[THPS_NR_ALLOC_CLASSES];
	bool sticky[THPS_NR_ALLOC_CLASSES];
};

/*
 * The memory cgroup (cgroup v2) of the machine's processes: its page
 * counter, its limits and its events, in pages.  One for the machine: the
 * processes a replay makes are one program's, in one container.
 */
struct mem_cgroup {
	spinlock_t lock;          /* the limits, the shrinker deferral, the events */
	atomic64_t usage;         /* memory.current, in pages */
	atomic64_t watermark;     /* memory.peak, in pages */
	uint64_t max, high;       /* memory.max, memory.high, in pages (UINT64_MAX: max) */
	int64_t nr_deferred;      /* the deferred-split shrinker's deferred work (do_shrink_slab) */
	atomic64_t stock;         /* pages charged ahead (memcg_stock_pcp; one CPU's): in usage,
				     not yet in any frame */
	uint64_t events[THPS_NR_MEMCG_EVENTS]; /* memory.events */
	uint64_t oom_kill_mm_id;  /* the last victim's mm, for the caller to see */
	bool oom_group;           /* memory.oom.group: a kill takes every process */
};

struct thps_proc {
	struct mm_struct mm;
	struct thps_machine *m;
	int pid;
	int oom_score_adj;     /* /proc/PID/oom_score_adj, -1000..1000 */
	struct thps_proc *next, *prev; /* machine's process list */
};

/*
 * The machine is read by every fault (the frame arrays, the zero pages'
 * frame numbers, the knobs) and written by some paths (locks, counters).
 * Written groups start on their own cache line, so that a thread taking the
 * zone lock or counting a huge zero page reference does not evict what
 * every other thread's page walk reads; Linux gets the same from
 * __read_mostly and ____cacheline_aligned_in_smp.  The machine is
 * allocated cache-line aligned (thps_machine_new).
 */
#define CACHELINE_BYTES 64
#define ____cacheline_aligned __attribute__((aligned(CACHELINE_BYTES)))

struct thps_machine {
	/* read mostly: physical memory, the zero pages, the knobs */
	uint8_t *ram;             /* host bytes of every frame */
	struct page *mem_map;     /* frame metadata */
	uint64_t nr_frames;
	uint64_t totalram_pages;  /* frames that are not reserved */
	uint32_t zero_pfn;        /* the 4 KiB zero page */
	uint32_t huge_zero_pfn;   /* the huge zero folio, NO_PFN while there is none;
				     set and cleared under huge_zero_lock */
	bool fail_counting;       /* armed by thps_fail_alloc() */
	bool global_oom;          /* thps_set_global_oom: an order-0 allocation that
				     reclaim cannot satisfy calls the OOM killer */
	bool one_at_a_time;       /* tests: no fault runs (fault.c) and a zap
				     frees each page before the next (memory.c) */
	struct knobs knobs;

	struct zone zone ____cacheline_aligned;
	struct pcp_pool pcp_pool ____cacheline_aligned; /* caches of exited processes */

	/* the huge zero folio's reference count (mm/huge_memory.c) */
	spinlock_t huge_zero_lock ____cacheline_aligned;
	atomic_t huge_zero_refcount;

	/* multi-size THP counters, by order (hugepages-<size>kB/stats/) */
	int64_t mthp_stat[HPAGE_PMD_ORDER + 1][THPS_NR_MTHP_STATS] ____cacheline_aligned;

	/* deferred split queue (mm/huge_memory.c) */
	spinlock_t split_queue_lock ____cacheline_aligned;
	uint32_t split_queue_head, split_queue_tail; /* head pfns */
	int64_t split_queue_len;

	spinlock_t knob_lock;

	/* counters: totals of exited processes and of work done outside any */
	spinlock_t stat_lock ____cacheline_aligned;
	struct vm_counters stat;

	/* the memory cgroup every process is in (memcontrol.c) */
	struct mem_cgroup memcg ____cacheline_aligned;

	/* processes */
	spinlock_t proc_lock ____cacheline_aligned;
	struct thps_proc *procs;
	int next_pid;
	uint32_t next_mm_id;

	/* khugepaged (khugepaged.c): its mm slots, its cursor, its counters and
	 * its simulated clock; touched only by thps_khugepaged_run and by the
	 * registration and exit of an mm, under khugepaged_lock */
	spinlock_t khugepaged_lock ____cacheline_aligned;
	struct khugepaged_scan {
		struct mm_struct *head, *tail; /* the mm slots */
		struct mm_struct *mm_slot;     /* the cursor's mm; NULL: start at head */
		uint64_t address;              /* the cursor's address in it */
		uint64_t pages_collapsed;      /* khugepaged/pages_collapsed */
		uint64_t full_scans;           /* khugepaged/full_scans */
		uint64_t pages_scanned;        /* the scan's progress, summed (no sysfs file) */
		uint64_t wakeups;              /* khugepaged_do_scan calls */
		uint64_t now_ms;               /* simulated time slept so far */
	} khugepaged;

	/* allocation-failure injection */
	spinlock_t fail_lock ____cacheline_aligned;
	struct fail_inject fail;

	/* the last error message */
	spinlock_t err_lock;
	char errbuf[512];

	/* the checker's per-frame scratch (debug.c), kept between calls so
	 * a check after every operation does not map and fault a fresh
	 * array each time; guarded by proc_lock, which thps_check holds */
	void *check_scratch;
	uint64_t check_scratch_frames;
};

#endif /* THPSIM_TYPES_H */
