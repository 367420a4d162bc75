/*
 * thpsim.h - the one public header of libthpsim.
 *
 * libthpsim is a userspace model of the Linux anonymous-memory manager:
 * 4 KiB pages, the shared zero page, PMD-sized transparent huge pages (THP)
 * and the huge zero page of the 2012 series "Introduce huge zero page"
 * (Linux 3.8), with what the kernel grew since (Linux 6.18 by default).
 *
 * A thps_machine is one simulated computer: physical memory, the THP knobs
 * (named as under /sys/kernel/mm/), the huge zero page, the shrinkers and
 * the /proc/vmstat counters.  A thps_proc is one simulated process (one
 * address space).  Every call returns 0 or a negative errno; running out of
 * simulated memory is not a bug and takes the kernel's fallback paths.
 *
 * Threads: calls on different processes may run on different threads at
 * once; calls on one process are serialized by that process's lock.
 */
#ifndef THPSIM_H
#define THPSIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define THPS_VERSION "0.1.0"

typedef struct thps_machine thps_machine;
typedef struct thps_proc thps_proc;

/* ------------------------------------------------------------------ */
/* Constants.  Numeric values are Linux's (x86-64) so traces map 1:1. */

#define THPS_PAGE_SIZE 4096UL
#define THPS_HPAGE_PMD_SIZE (2UL << 20)

#define THPS_PROT_NONE 0x0
#define THPS_PROT_READ 0x1
#define THPS_PROT_WRITE 0x2
#define THPS_PROT_EXEC 0x4

#define THPS_MAP_SHARED 0x01
#define THPS_MAP_PRIVATE 0x02
#define THPS_MAP_FIXED 0x10
#define THPS_MAP_ANONYMOUS 0x20
#define THPS_MAP_GROWSDOWN 0x0100
#define THPS_MAP_LOCKED 0x2000   /* not modelled (mlock): -EOPNOTSUPP */
#define THPS_MAP_NORESERVE 0x4000
#define THPS_MAP_POPULATE 0x8000
#define THPS_MAP_STACK 0x20000 /* Linux 6.7+: the mapping gets VM_NOHUGEPAGE */
#define THPS_MAP_HUGETLB 0x40000 /* not modelled (hugetlbfs): -EOPNOTSUPP */
#define THPS_MAP_FIXED_NOREPLACE 0x100000

#define THPS_MREMAP_MAYMOVE 1
#define THPS_MREMAP_FIXED 2

#define THPS_MADV_NORMAL 0
#define THPS_MADV_DONTNEED 4
#define THPS_MADV_FREE 8
#define THPS_MADV_HUGEPAGE 14
#define THPS_MADV_NOHUGEPAGE 15
#define THPS_MADV_COLLAPSE 25 /* Linux 6.1+: collapse into THPs now (khugepaged.c) */

/* ------------------------------------------------------------------ */
/* Figures, each list written once (X-macros) and carrying the kernel's
 * names.  The enum values index the arrays filled in below.          */

/* /proc/vmstat events (monotonic counters). */
#define THPS_VM_EVENTS(X)                                                      \
	X(pgfault)                                                             \
	X(thp_fault_alloc)                                                     \
	X(thp_fault_fallback)                                                  \
	X(thp_fault_fallback_charge)                                           \
	X(thp_collapse_alloc)                                                  \
	X(thp_collapse_alloc_failed)                                           \
	X(thp_split_page)                                                      \
	X(thp_split_page_failed)                                               \
	X(thp_deferred_split_page)                                             \
	X(thp_underused_split_page)                                            \
	X(thp_split_pmd)                                                       \
	X(thp_zero_page_alloc)                                                 \
	X(thp_zero_page_alloc_failed)

/* /proc/vmstat gauges (current values, in pages). */
#define THPS_VM_GAUGES(X)                                                      \
	X(nr_free_pages)                                                       \
	X(nr_anon_pages)                                                       \
	X(nr_anon_transparent_hugepages)                                       \
	X(nr_page_table_pages)

/* Per-process figures in kB: smaps_rollup fields then status fields. */
#define THPS_PROC_FIGURES(X)                                                   \
	X(Rss)                                                                 \
	X(Pss)                                                                 \
	X(Pss_Anon)                                                            \
	X(Shared_Clean)                                                        \
	X(Shared_Dirty)                                                        \
	X(Private_Clean)                                                       \
	X(Private_Dirty)                                                       \
	X(Anonymous)                                                           \
	X(AnonHugePages)                                                       \
	X(VmSize)                                                              \
	X(VmRSS)                                                               \
	X(RssAnon)                                                             \
	X(VmHWM)                                                               \
	X(VmPTE)

/* /proc/meminfo fields in kB. */
#define THPS_MEMINFO(X)                                                        \
	X(MemTotal)                                                            \
	X(MemFree)                                                             \
	X(AnonPages)                                                           \
	X(AnonHugePages)                                                       \
	X(PageTables)

#define THPS_ENUM_ITEM(name) THPS_VM_##name,
enum thps_vm_item { THPS_VM_EVENTS(THPS_ENUM_ITEM) THPS_VM_GAUGES(THPS_ENUM_ITEM) THPS_NR_VM_ITEMS };
#undef THPS_ENUM_ITEM
/* The events come first: items 0 .. THPS_NR_VM_EVENTS - 1. */
#define THPS_COUNT_ITEM(name) +1
#define THPS_NR_VM_EVENTS (0 THPS_VM_EVENTS(THPS_COUNT_ITEM))
#define THPS_ENUM_ITEM(name) THPS_PROC_##name,
enum thps_proc_item { THPS_PROC_FIGURES(THPS_ENUM_ITEM) THPS_NR_PROC_ITEMS };
#undef THPS_ENUM_ITEM
#define THPS_ENUM_ITEM(name) THPS_MEM_##name,
enum thps_meminfo_item { THPS_MEMINFO(THPS_ENUM_ITEM) THPS_NR_MEMINFO_ITEMS };
#undef THPS_ENUM_ITEM

/*
 * Multi-size THP (Linux 6.8+): the counters each anonymous folio size keeps
 * under /sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats/, by
 * their file names.  The events count from boot; nr_anon and
 * nr_anon_partially_mapped are gauges.  Sizes are orders THPS_MTHP_MIN_ORDER
 * (16 KiB) to THPS_MTHP_MAX_ORDER (2 MiB, the PMD size, whose folios count
 * here too).
 */
#define THPS_MTHP_STATS(X)                                                     \
	X(anon_fault_alloc)                                                    \
	X(anon_fault_fallback)                                                 \
	X(anon_fault_fallback_charge)                                          \
	X(split)                                                               \
	X(split_failed)                                                        \
	X(split_deferred)                                                      \
	X(nr_anon)                                                             \
	X(nr_anon_partially_mapped)
#define THPS_ENUM_ITEM(name) THPS_MTHP_##name,
enum thps_mthp_stat { THPS_MTHP_STATS(THPS_ENUM_ITEM) THPS_NR_MTHP_STATS };
#undef THPS_ENUM_ITEM
#define THPS_MTHP_MIN_ORDER 2
#define THPS_MTHP_MAX_ORDER 9

/*
 * The memory cgroup (cgroup v2) every process of a machine is in: its
 * memory.events, by their names (low is never raised: no memory.low).
 */
#define THPS_MEMCG_EVENTS(X)                                                   \
	X(low)                                                                 \
	X(high)                                                                \
	X(max)                                                                 \
	X(oom)                                                                 \
	X(oom_kill)                                                            \
	X(oom_group_kill)
#define THPS_ENUM_ITEM(name) THPS_MEMCG_##name,
enum thps_memcg_event { THPS_MEMCG_EVENTS(THPS_ENUM_ITEM) THPS_NR_MEMCG_EVENTS };
#undef THPS_ENUM_ITEM

/* Names of the items above, as the kernel prints them. */
const char *thps_memcg_event_name(int event);
const char *thps_vm_item_name(int item);
const char *thps_proc_item_name(int item);
const char *thps_meminfo_item_name(int item);
const char *thps_mthp_stat_name(int stat);

/* ------------------------------------------------------------------ */
/* Machine. */

struct thps_config {
	uint64_t ram_bytes; /* simulated RAM; 0 = default (4 GiB) */
};

int thps_machine_new(const struct thps_config *cfg, thps_machine **out);
/* Exits every process left, then frees the machine. */
void thps_machine_free(thps_machine *m);

/*
 * Knobs.  Names are the sysfs paths below /sys/kernel/mm/, e.g.
 * "transparent_hugepage/enabled" = "always" | "madvise" | "never", plus
 * model-only knobs under "thpsim/" for behaviour that changed across kernel
 * versions.  thps_knob_set returns -ENOENT for an unknown name and -EINVAL
 * for a bad value, and then changes nothing.
 */
int thps_knob_set(thps_machine *m, const char *name, const char *value);
int thps_knob_get(thps_machine *m, const char *name, char *buf, size_t len);
/* Iterate knobs: name of knob i, or NULL past the end. */
const char *thps_knob_name(int i);
/* One line of help for knob i: values and kernel versions. */
const char *thps_knob_help(int i);
/* The index of the knob named name, or -1. */
int thps_knob_index(const char *name);
/* Could the kernel of m's profile take name=value?  0, with the reason in
 * why, for a file that kernels before some version lack (the knob table's
 * needs column: hugepages-16kB..1024kB/enabled need thpsim/mthp=1, Linux
 * 6.8) set to other than its default, which is how such a kernel behaves;
 * 1 otherwise (an unknown name or bad value too: thps_knob_set says). */
int thps_knob_offered(thps_machine *m, const char *name, const char *value, char *why,
		      size_t len);
/* Value v of those the fuzzers try for knob i; NULL past them, and for a
 * knob they leave alone. */
const char *thps_knob_fuzz_value(int i, int v);
/* How the kernel runner (thpsim kernel, validate) treats a scenario's
 * setting of a knob, which it never writes on the host: */
enum thps_knob_kernel {
	THPS_KNOB_KERNEL_MATCH,    /* the file under /sys/kernel/mm/ must have the value */
	THPS_KNOB_KERNEL_MODE,     /* the global THP mode: emulated per mapping (madvise, prctl) */
	THPS_KNOB_KERNEL_PMD_MODE, /* the PMD size's own mode: emulated with the global one */
	THPS_KNOB_KERNEL_PROFILE,  /* a thpsim/ knob: the kernel's profile must have the value */
};
/* Knob i's enum thps_knob_kernel, or -1 past the end. */
int thps_knob_kernel(int i);
/* The first knob the kernel runner treats as kernel (enum thps_knob_kernel),
 * or NULL: THPS_KNOB_KERNEL_PMD_MODE is the PMD size's enabled file. */
const char *thps_knob_of_kernel(int kernel);

/*
 * Kernel profiles: the thpsim/ knobs are what differs between kernels that
 * sysfs does not show.  Change i: from Linux "since" on, knob has value,
 * because of the named Linux change; NULL past the end.  Rows of one knob
 * are in version order.  "thpsim/kernel" = "X.Y" sets every thpsim/ knob
 * to its value in Linux X.Y.
 */
struct thps_profile_change {
	const char *knob, *since, *value, *change;
};
const struct thps_profile_change *thps_profile_change(int i);

/* vm items (events then gauges), in pages/counts; index by enum thps_vm_item. */
void thps_vmstat(thps_machine *m, uint64_t out[THPS_NR_VM_ITEMS]);
/* hugepages-<size>kB/stats/ of one order (THPS_MTHP_MIN_ORDER ..
 * THPS_MTHP_MAX_ORDER); index by enum thps_mthp_stat.  -EINVAL: no such size. */
int thps_mthp_stats(thps_machine *m, int order, uint64_t out[THPS_NR_MTHP_STATS]);
/* meminfo in kB; index by enum thps_meminfo_item. */
void thps_meminfo(thps_machine *m, uint64_t out[THPS_NR_MEMINFO_ITEMS]);

/*
 * Memory pressure: run every shrinker (the huge zero page's and the
 * deferred-split queue's), as "echo 2 > /proc/sys/vm/drop_caches" does.
 */
void thps_drop_caches(thps_machine *m);

/*
 * khugepaged on simulated time (Linux's mm/khugepaged.c; nothing runs until
 * this is called).  Runs wake-ups, each scanning pages_to_scan pages from
 * where the last stopped and then sleeping scan_sleep_millisecs of
 * simulated time, until "wakeups" wake-ups were made or full_scans has
 * grown by "full_scans" (0: no such limit; at least one must be set), or
 * no process is registered with khugepaged.  Call it when no other thread
 * is in the model.  Returns 0.
 */
int thps_khugepaged_run(thps_machine *m, uint64_t wakeups, uint64_t full_scans);
/* khugepaged's figures: the first two are its sysfs files of those names
 * (transparent_hugepage/khugepaged/pages_collapsed, full_scans). */
struct thps_khugepaged_stats {
	uint64_t pages_collapsed; /* 2 MiB ranges it collapsed */
	uint64_t full_scans;      /* passes over every registered mm */
	uint64_t pages_scanned;   /* its progress summed (Linux has no such file) */
	uint64_t wakeups;         /* wake-ups made */
	uint64_t now_ms;          /* simulated milliseconds it slept */
	uint64_t mm_slots;        /* address spaces registered with it now: with
				     none it sleeps until one registers */
};
void thps_khugepaged_stats(thps_machine *m, struct thps_khugepaged_stats *out);

/*
 * Host bytes of metadata the model keeps for each simulated 4 KiB frame
 * (its struct page).  The frames' own bytes and the metadata are reserved
 * for the whole simulated RAM but committed by the host only when touched.
 */
size_t thps_frame_metadata_bytes(void);

/*
 * Whole-state consistency check: reference and map counts equal the
 * mappings, Rss equals a fresh walk, the huge zero page is never mapped
 * writable, the buddy lists are consistent.  Returns 0, or -EUCLEAN after
 * writing what is wrong to the machine's error buffer (thps_last_error).
 * Takes every process lock; call it when no other thread is in the model.
 */
int thps_check(thps_machine *m);
const char *thps_last_error(thps_machine *m);

/*
 * Allocation-failure injection: the nth (1-based) allocation of the given
 * class from now on fails; 0 disarms.  Every later allocation also fails
 * when "sticky" is set.  Returns the number of allocations of each class
 * made so far through *count (may be NULL).
 */
enum thps_alloc_class {
	THPS_ALLOC_PAGE,    /* frames for data: 4 KiB pages and THPs */
	THPS_ALLOC_PGTABLE, /* page-table pages */
	THPS_ALLOC_ANY,     /* either */
	THPS_NR_ALLOC_CLASSES
};
void thps_fail_alloc(thps_machine *m, enum thps_alloc_class cls, uint64_t nth, int sticky);
uint64_t thps_alloc_count(thps_machine *m, enum thps_alloc_class cls);

/* ------------------------------------------------------------------ */
/* The memory cgroup. */

#define THPS_MEMCG_NOLIMIT UINT64_MAX /* "max" */
/*
 * memory.max and memory.high, in bytes (rounded down to pages, as the
 * kernel's page_counter_memparse does); THPS_MEMCG_NOLIMIT for none.
 * A limit below the usage takes effect at the next charge (the kernel's
 * write to memory.max reclaims at once; the model waits for the program).
 */
int thps_memcg_set_limits(thps_machine *m, uint64_t max_bytes, uint64_t high_bytes);
/* memory.oom.group: 1, a kill takes every process of the cgroup. */
void thps_memcg_set_oom_group(thps_machine *m, int group);
/*
 * The machine's own OOM killer: with on, an allocation of order 3 or less
 * that may reclaim and still finds no memory (the machine is full) kills
 * the process with the most points, as Linux's out_of_memory does, and is
 * tried again.  Off (the default) it fails, which a fault reports as
 * -ENOMEM (the kernel's VM_FAULT_OOM).
 */
void thps_set_global_oom(thps_machine *m, int on);
/*
 * A fresh machine's free memory made exactly blocks[o] free blocks of each
 * order o = 0..n-1 (4 KiB to 4 MiB), as a real machine's /proc/buddyinfo
 * counts them, the rest of its RAM held for good: how a fragmented or
 * mostly reserved machine is modelled.  -EBUSY after the first process,
 * -ENOSPC when the RAM is short of 2^(o+1) frames per block of order below
 * 10 (2^10 for those) plus 4 MiB.
 */
int thps_shape_free(thps_machine *m, const uint64_t *blocks, int n);
struct thps_memcg_stat {
	uint64_t current_bytes;   /* memory.current: what is charged now */
	uint64_t peak_bytes;      /* memory.peak: the most ever charged */
	uint64_t max_bytes, high_bytes; /* the limits (THPS_MEMCG_NOLIMIT: max) */
	uint64_t events[THPS_NR_MEMCG_EVENTS]; /* memory.events */
};
void thps_memcg_read(thps_machine *m, struct thps_memcg_stat *out);
/* One memory.events count, without the lock (cheap enough for every call). */
uint64_t thps_memcg_event(thps_machine *m, int event);
/* memory.peak starts again from memory.current (a write to memory.peak). */
void thps_memcg_reset_peak(thps_machine *m);

/* ------------------------------------------------------------------ */
/* Processes. */

/* A new process with an empty address space (as after execve). */
int thps_proc_new(thps_machine *m, thps_proc **out);
/* fork(): the child shares every page copy-on-write. */
int thps_fork(thps_proc *parent, thps_proc **child);
/* exit(): tears the address space down and frees the process. */
void thps_exit(thps_proc *p);
int thps_pid(const thps_proc *p);
/* The OOM killer chose this process: its accesses (thps_read, thps_write,
 * thps_touch) return -EINTR, and it is for the caller to thps_exit it.
 * A victim other than the process whose fault called the killer has its
 * memory freed at once (the OOM reaper's work); the faulting one's goes
 * when it exits. */
int thps_proc_oom_killed(const thps_proc *p);
/* /proc/PID/oom_score_adj: -1000 (never chosen) .. 1000; -EINVAL outside. */
int thps_set_oom_score_adj(thps_proc *p, int adj);

/* prctl(PR_SET_THP_DISABLE, value). */
int thps_prctl_thp_disable(thps_proc *p, int value);

int thps_mmap(thps_proc *p, uint64_t addr, uint64_t len, int prot, int flags, uint64_t *out_addr);
int thps_munmap(thps_proc *p, uint64_t addr, uint64_t len);
int thps_mprotect(thps_proc *p, uint64_t addr, uint64_t len, int prot);
int thps_mremap(thps_proc *p, uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags,
		uint64_t new_addr, uint64_t *out_addr);
int thps_madvise(thps_proc *p, uint64_t addr, uint64_t len, int advice);
/* brk(): returns the current break through *out (addr 0 queries). */
int thps_brk(thps_proc *p, uint64_t addr, uint64_t *out);
/*
 * The break an exec leaves: the heap starts at start_brk and ends at brk
 * (start_brk == brk: no heap yet).  [start_brk, brk) must be mapped already
 * (as one anonymous mapping, as exec's [heap]).  Replaying a recorded
 * program sets its break where the kernel put it.
 */
int thps_brk_init(thps_proc *p, uint64_t start_brk, uint64_t brk);
/*
 * RLIMIT_STACK (default 8 MiB): a fault below a MAP_GROWSDOWN mapping grows
 * it down to the faulting page while it stays within this size and 1 MiB
 * (stack_guard_gap) above the mapping below, as Linux's stack does.
 */
int thps_set_stack_rlimit(thps_proc *p, uint64_t bytes);

/*
 * Memory accesses, as the CPU makes them: every page not mapped, or mapped
 * read-only on a write, takes a page fault through the model's
 * handle_mm_fault.  An access the VMA does not allow (or outside every VMA)
 * returns -EFAULT (the program's SIGSEGV) and changes nothing from that page
 * on.  -ENOMEM when a fault finds no memory (the kernel's VM_FAULT_OOM).
 */
int thps_read(thps_proc *p, uint64_t addr, void *buf, size_t len);
int thps_write(thps_proc *p, uint64_t addr, const void *buf, size_t len);

/*
 * touch: one byte every "step" bytes of [addr, addr+len).  A write stores
 * "value"; a read compares with "value" when check is set and counts the
 * bytes that differ in *mismatches (may be NULL).
 */
/* THPS_TOUCH_DIRTY: a write without its byte.  The page faults and counts as
 * holding data, as after a write, but nothing is stored: it reads back as
 * zeros.  For replaying traces, which know that a program wrote, not what. */
enum thps_touch_op { THPS_TOUCH_READ, THPS_TOUCH_WRITE, THPS_TOUCH_DIRTY };
struct thps_touch {
	uint64_t addr, len, step;
	enum thps_touch_op op;
	uint8_t value;
	int check;
	uint64_t mismatches; /* out */
	uint64_t done;       /* out: bytes touched before an error */
};
int thps_touch(thps_proc *p, struct thps_touch *t);

/* Per-process figures in kB (smaps_rollup and status); see THPS_PROC_FIGURES. */
int thps_proc_figures(thps_proc *p, uint64_t out[THPS_NR_PROC_ITEMS]);
/*
 * The two figures a time series needs, cheaply: Rss from the counters (as
 * status's VmRSS) and AnonHugePages from a walk of the PMDs only, so the
 * cost grows with the VMAs and the 2 MiB ranges, not with the pages.  Equal
 * to thps_proc_figures' Rss and AnonHugePages.  anon_huge_kb NULL: Rss
 * alone, from the counters, with no walk.
 */
int thps_proc_usage(thps_proc *p, uint64_t *rss_kb, uint64_t *anon_huge_kb);

/*
 * The page-table pages behind VmPTE: PTE tables (deposited ones included)
 * and the PMD and PUD tables above them.
 */
int thps_proc_pgtables(thps_proc *p, uint64_t *pte_tables, uint64_t *upper_tables);

/*
 * Anonymous memory of [start, end) (page-aligned), counted as smaps counts
 * a VMA's, page by page: a huge PMD counts only its pages inside the
 * range, so ranges that cover the VMAs sum to thps_proc_figures' Anonymous
 * and AnonHugePages.  For attribution by mapping and huge-page coverage.
 */
struct thps_range_stats {
	uint64_t anon_kb;       /* Anonymous: pages with a struct page mapped here */
	uint64_t anon_huge_kb;  /* AnonHugePages: of those, mapped by a huge PMD */
	/* of anon_kb, by the order of the folio each page is in: 0 small
	 * pages, 2..8 mTHP (or a split THP's pieces), 9 the PMD size
	 * (mapped by the PMD or, after a PMD split, by PTEs) */
	uint64_t folio_kb[THPS_MTHP_MAX_ORDER + 1];
	uint64_t zero_kb;       /* mapped to the shared zero page (in no Rss) */
	uint64_t huge_zero_kb;  /* mapped by the huge zero page (in no Rss) */
};
int thps_range_stats(thps_proc *p, uint64_t start, uint64_t end, struct thps_range_stats *out);
/* The same, Anonymous and AnonHugePages alone: no folio is looked at, the
 * walk the attribution by mapping repeats at each peak view. */
int thps_range_anon(thps_proc *p, uint64_t start, uint64_t end, uint64_t *anon_kb,
		    uint64_t *anon_huge_kb);

/*
 * The order of the folio each page of [start, end) (page-aligned) is
 * mapped from, into orders[(addr - start) >> 12], as tools/mm/thpmaps
 * reads pagemap and kpageflags: 0 a small page, 2..8 an mTHP folio (PTE-
 * mapped), 9 the PMD size (by the PMD, or by PTEs after a PMD split);
 * THPS_NO_FOLIO where nothing with a struct page is mapped (no entry, the
 * zero pages).  For the coverage of each folio size.
 */
#define THPS_NO_FOLIO 0xff
int thps_folio_orders(thps_proc *p, uint64_t start, uint64_t end, uint8_t *orders);

/* Page state at one address, as /proc/PID/pagemap and kpageflags show it. */
struct thps_pageinfo {
	int present;       /* mapped */
	int writable;      /* mapped writable */
	int huge;          /* mapped by a PMD */
	int zero_page;     /* the 4 KiB shared zero page */
	int huge_zero;     /* the huge zero page */
	int thp;           /* a page of a transparent huge page (PMD- or PTE-mapped) */
	int anon_exclusive;
	uint64_t pfn;
	int mapcount;      /* folio mapcount */
};
int thps_pageinfo(thps_proc *p, uint64_t addr, struct thps_pageinfo *out);
/*
 * For each of n addresses, whether a PMD maps its 2 MiB (a THP or the huge
 * zero page: thps_pageinfo's huge), into mapped[i] as 1 or 0, under one
 * hold of the process's lock: what a point of the coverage series asks of
 * every range the program touched.
 */
int thps_pmd_mapped(thps_proc *p, const uint64_t *addr, size_t n, uint8_t *mapped);

/*
 * Could a folio larger than a page back the VMA at addr, wherever the VMA
 * lay within 2 MiB?  1 when the settings and the VMA allow a THP or mTHP
 * order (thp_vma_allowable_orders: enabled, MADV_HUGEPAGE/NOHUGEPAGE, the
 * process's PR_SET_THP_DISABLE) whose size the VMA is at least; 0 when
 * not, or when nothing is mapped there.  The same settings make
 * khugepaged's choice of what it may collapse.
 */
int thps_thp_possible(thps_proc *p, uint64_t addr);

/* Describe the VMAs like /proc/PID/maps; calls fn once per VMA. */
typedef void (*thps_vma_fn)(void *arg, uint64_t start, uint64_t end, int prot, const char *flags);
int thps_for_each_vma(thps_proc *p, thps_vma_fn fn, void *arg);

#ifdef __cplusplus
}
#endif
#endif /* THPSIM_H */
