/*
 * replay.h - running a recorded trace through the model.
 *
 * A replay reads a trace (src/trace) and drives one simulated machine: each
 * address space the program had becomes a thps_proc, each memory system
 * call is made again at the address the kernel chose, and each first read
 * or write becomes the same access in the model, which then takes the
 * faults the policy implies (a THP, the huge zero page, a 4 KiB page...).
 *
 * The model holds anonymous private memory only.  File-backed and shared
 * mappings are remembered as "foreign" ranges so that faults in them are
 * skipped, counted and reported by kind, never silently lost and never an
 * error; the same goes for calls the model does not have (MADV_COLLAPSE,
 * shmat...).
 *
 * khugepaged runs during the replay on the trace's clock (replay.c,
 * "khugepaged on the trace's clock"), with the recording machine's
 * khugepaged/ settings unless --set changes them.
 *
 * Figures: each address space's final figures (as smaps_rollup and status
 * would show them just before it exited or exec'd), its peak Rss (VmHWM)
 * and a time series of Rss and AnonHugePages, sampled every N events with N
 * doubling so that a trace of any length keeps at most REPLAY_SERIES_MAX
 * points.
 */
#ifndef THPSIM_REPLAY_H
#define THPSIM_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "thpsim.h"
#include "trace/trace.h"
#include "util/json.h"
#include "util/knobs.h"

#define REPLAY_SERIES_MAX 256
#define REPLAY_HEAP_OFFSETS 512 /* pages in 2 MiB: the heap shifts a layout may take */
#define REPLAY_MAX_KNOBS 64 /* the knobs in force a result lists */

struct replay_point {
	uint64_t t_ns;
	uint64_t idx;      /* global sample number */
	uint64_t rss_kb, anon_huge_kb; /* smaps_rollup (overall: summed over processes) */
	/* overall only: the machine's meminfo AnonPages and AnonHugePages,
	 * each page once however many processes map it */
	uint64_t anon_pages_kb, mem_anon_huge_kb;
};

/* The touched pages in mTHP folios (PTE-mapped large folios below the PMD
 * size) are counted by the folio's order: index 1..REPLAY_MTHP_ORDERS-1,
 * 8 KiB to 1 MiB. */
#define REPLAY_MTHP_ORDERS THPS_MTHP_MAX_ORDER
/* "64K", "1M": the folio size of an order, as the table and JSON keys
 * name it. */
const char *replay_folio_size_name(int order, char *buf, size_t len);

/* The coverage over time (measure_occupancy.c): at each sample, the pages
 * the live processes touched and still map, and of them those a PMD maps. */
struct replay_coverage_point {
	uint64_t t_ns, idx;
	uint64_t touched_kb, touched_huge_kb;
	uint64_t touched_mthp_kb[REPLAY_MTHP_ORDERS]; /* by folio order, as in replay_occupancy */
};
struct replay_coverage {
	struct replay_coverage_point *p;
	int n, cap;
};

/* The pages the program accessed (measure_access.c): one point per ACCESS
 * sample the recorder took with DAMON (record --access), for the process
 * it watched.  Of the accessed regions: the pages the model maps, those a
 * PMD maps (a THP or the huge zero page), those in smaller THP folios
 * (mTHP, or a PMD-size folio mapped by PTEs after a split), and the
 * translations (TLB entries on x86-64) they take: one per PMD-mapped
 * 2 MiB range, one per other page.  With the recording kernel's own
 * figures for the same regions when the trace has them (recorded under
 * the kernel's policy, not the replay's). */
struct replay_access_point {
	uint64_t t_ns, interval_us;
	int32_t pid;
	uint64_t accessed_kb;      /* the regions' size */
	uint64_t present_kb, pmd_kb, mthp_kb;
	uint64_t pmd_translations, pte_translations;
	int kernel;                /* the recording kernel's figures below are there */
	uint64_t kernel_present_kb, kernel_pmd_kb, kernel_mthp_kb;
};
struct replay_access {
	struct replay_access_point *p;
	int n, cap;
	char source[192];          /* the trace's "access" header: how, or why not */
	struct replay_access_point pending; /* the sample being read */
	uint64_t pending_block;    /* its last PMD-mapped 2 MiB range counted, + 1 */
};


struct replay_series {
	struct replay_point *p;
	int n, cap;
};

/* What was skipped, by reason; each an X-macro item with its description. */
#define REPLAY_SKIPS(X)                                                                 \
	X(fault_file, "faults in file-backed or shared mappings (not modelled)")           \
	X(fault_unmapped, "faults outside every mapping, or not allowed by it (SIGSEGV)")  \
	X(fault_noproc, "faults of a process the trace never introduced")                  \
	X(oom_killed, "records of processes the OOM killer had ended (and their children)") \
	X(fault_oom, "faults the simulated machine had no memory for")                     \
	X(mmap_foreign, "mmap calls of file-backed or shared memory (not modelled)")       \
	X(call_failed, "calls the kernel did and the model refused")                       \
	X(call_unmodelled, "calls or advice the model does not have")                      \
	X(brk_diverged, "brk calls whose result differs from the kernel's")

#define REPLAY_SKIP_ENUM(name, desc) REPLAY_SKIP_##name,
enum replay_skip { REPLAY_SKIPS(REPLAY_SKIP_ENUM) REPLAY_NR_SKIPS };
#undef REPLAY_SKIP_ENUM
const char *replay_skip_name(int i);
const char *replay_skip_desc(int i);

/* Where an anonymous mapping came from: its kind, for the roll-up of
 * attribution by mapping (measure_mappings.c).  Name, label, meaning. */
#define REPLAY_MAP_KINDS(X)                                                                    \
	X(heap, "heap", "the brk heap (exec's [heap] and what brk added)")                      \
	X(stack, "stack", "the main thread's stack ([stack])")                                  \
	X(thread_stack, "thread stacks", "anonymous mmaps with MAP_STACK (glibc's thread stacks)") \
	X(exec_anon, "exec's anonymous", "anonymous mappings exec made (bss)")                  \
	X(mmap_small, "mmap <256K", "anonymous mmaps under 256 KiB")                            \
	X(mmap_medium, "mmap 256K-2M", "anonymous mmaps of 256 KiB to under 2 MiB")             \
	X(mmap_large, "mmap 2M-32M", "anonymous mmaps of 2 MiB to under 32 MiB")                \
	X(mmap_huge, "mmap >=32M", "anonymous mmaps of 32 MiB and more")                        \
	X(other, "other", "memory no recorded call explains")

#define REPLAY_MAP_KIND_ENUM(name, label, desc) REPLAY_MAP_##name,
enum replay_map_kind { REPLAY_MAP_KINDS(REPLAY_MAP_KIND_ENUM) REPLAY_NR_MAP_KINDS };
#undef REPLAY_MAP_KIND_ENUM
const char *replay_map_kind_name(int kind);
const char *replay_map_kind_label(int kind);

/* Figures of one mapping (kB), as smaps would count its range. */
struct replay_map_figures {
	uint64_t anon_kb, anon_huge_kb;
};

/* One anonymous mapping of an address space, by where it came from: the
 * range one call made (mmap, brk, exec, mremap), kept as later calls
 * unmap, move or advise parts of it; two calls' mappings that the kernel
 * merged into one VMA stay two here.  Its pieces (after a partial munmap,
 * say) share its id. */
struct replay_mapping {
	uint64_t start, end;     /* reported: from its lowest piece to its highest */
	uint32_t id;             /* per address space, from 1; a fork's child keeps them */
	int kind;                /* enum replay_map_kind */
	const char *call;        /* "mmap", "brk", "exec", "mremap" */
	const char *caller;      /* the call's user call chain (a CALLER record), or NULL;
				    interned in the result's callers */
	uint64_t t_ns;           /* when the call was made */
	uint64_t len0;           /* its length then */
	int prot, flags;         /* PROT_*, Linux's MAP_* flags of the call */
	int advice;              /* the last MADV_HUGEPAGE (14) or MADV_NOHUGEPAGE (15), or 0 */
	int gone;                /* reported: unmapped after the peak, before the end */
	struct replay_map_figures final, peak; /* a piece: its figures in "final" */
};

struct replay_mappings {
	struct replay_mapping *v;
	int n, cap;
};

/* One address space: a process from its exec (or fork) to its exit (or
 * next exec). */
/*
 * Occupancy of the 2 MiB ranges (measure_occupancy.c): of each 2 MiB-aligned
 * range of an address space, how many of its 512 pages the program has
 * touched (read or written) and written, while they stay mapped (unmapped,
 * MADV_DONTNEED: forgotten).  The number that decides what a THP there
 * costs (512 pages for the touched ones), whether khugepaged collapses it
 * (max_ptes_none) and whether the underused-THP shrinker splits it.
 * Histograms of ranges by that number, in REPLAY_OCC_BUCKETS buckets of 64
 * (1-64, ..., 449-511) and one for all 512, by the kind of the mapping at
 * the range's first touched page; with the touched and written kB and, of
 * the touched, how much a PMD maps (a THP or the huge zero page: the
 * coverage of what the program touched) and how much mTHP folios of each
 * size map.
 */
#define REPLAY_OCC_BUCKETS 9
struct replay_occupancy {
	uint64_t ranges[REPLAY_NR_MAP_KINDS][2][REPLAY_OCC_BUCKETS]; /* [kind][written][bucket] */
	uint64_t touched_kb, written_kb, touched_huge_kb;
	/* of the touched, in mTHP folios, by order (index 1..8; 0 unused) */
	uint64_t touched_mthp_kb[REPLAY_MTHP_ORDERS];
};
/* Bucket b's pages, "1-64" ... "512"; NULL past them. */
const char *replay_occ_bucket_name(int b);
struct occ_ranges;
struct replay_xlat;

struct replay_mm {
	int pid;
	char name[64];
	int users;               /* processes sharing it (vfork, CLONE_VM) */
	int ended;
	const char *end;         /* "exit", "exec", "end of trace" */
	uint64_t start_ns, end_ns;
	thps_proc *proc;
	uint64_t final[THPS_NR_PROC_ITEMS];
	uint64_t peak_anon_huge_kb;
	/* the kernel's figures recorded at exit (THP disabled) and the
	 * model's at the same point of the replay */
	int have_kfig;
	uint64_t kfig_anonymous, kfig_anon_huge, kfig_rss;
	uint64_t model_at_kfig[THPS_NR_PROC_ITEMS];
	uint64_t faults;         /* fault records replayed */
	/* the OOM killer ended it (end is "OOM kill"): when, and after how
	 * many of the trace's records */
	int oom_killed;
	uint64_t oom_kill_ns, oom_kill_record;
	struct replay_series series;
	/* file-backed and shared ranges: [start, end, private file?], sorted */
	uint64_t (*foreign)[3];
	int nforeign, capforeign;
	/* pages written in private file mappings: the kernel copies them into
	 * anonymous pages (counted in its Anonymous); the model holds no file
	 * mappings, so they are counted here, page by page */
	uint64_t *cow;
	size_t cow_cap, cow_used, cow_n;
	uint64_t final_file_cow_kb; /* at the end */
	uint64_t kfig_file_cow_kb;  /* at the recorded exit */
	/* at the end, by private file range holding copies: start, end, kB
	 * (what smaps counts as Anonymous in each file-backed VMA) */
	uint64_t (*final_file_cow)[3];
	int nfinal_file_cow;
	/* an exec's break, set once its heap is mapped */
	uint64_t pending_start_brk, pending_brk;
	int brk_pending;
	uint64_t brk_now;        /* the break now, as the kernel returned it */
	/* attribution by mapping (measure_mappings.c): the pieces alive,
	 * sorted by address; the pieces as they were at the address space's
	 * highest Anonymous, with their figures then; and, at the end, one
	 * entry per mapping (by id) with its final and peak figures */
	struct replay_mappings maps, maps_at_peak, mappings;
	/* the model's VMAs at the end, with their figures (start, end in
	 * the mapping fields), to hold against the kernel's smaps */
	struct replay_mappings vmas;
	uint32_t maps_next_id;
	struct replay_map_figures other_final, other_peak; /* what no mapping explains */
	uint64_t maps_peak_anon_kb; /* the Anonymous at the last peak taken */
	/* occupancy (measure_occupancy.c): the pages the program touched and
	 * wrote, by 2 MiB range, while they stay mapped; the histograms at
	 * the end and when most pages were touched */
	struct occ_ranges *occ;
	struct replay_occupancy occ_final, occ_peak;
	/* under a layout other than the recorded one (layout.c): the
	 * recorded addresses' shifts, the exec's exe and heap shifts, the
	 * recorded start of the heap and the highest end it had */
	struct replay_xlat *xlat;
	int64_t exe_delta, brk_delta;
	uint64_t start_brk_rec, heap_end_rec;
};

/* The regions of an address layout (layout.c). */
#define REPLAY_REGION_EXE 1   /* the executable's mappings and its bss */
#define REPLAY_REGION_BRK 2   /* the heap */
#define REPLAY_REGION_MMAP 4  /* what mmap and mremap placed, ld.so, the vdso */
#define REPLAY_REGION_STACK 8 /* the main stack */

struct replay_opts {
	/* knobs, applied after the recording machine's settings (unless
	 * no_trace_knobs) */
	struct knob_sets knobs;
	int no_trace_knobs;
	uint64_t ram_bytes;      /* 0: 64 GiB (committed only as used) */
	int progress;            /* report progress on stderr */
	const char *label;       /* for progress lines */
	uint64_t settle_ms;      /* --settle: khugepaged runs this long (simulated) after
				    the last record; 0: not at all */
	int no_khugepaged;       /* --khugepaged off: no background scan during the
				    trace (MADV_COLLAPSE and --settle still run) */
	uint64_t khugepaged_phase_ms; /* its first wake-up this long after an mm registers
				    (0: at once, as on an idle machine) */
	int khugepaged_phase_pinned;  /* --khugepaged-phase: replay_run_layouts keeps it */
	int thp_disabled;        /* --as-recorded: every process under PR_SET_THP_DISABLE,
				    as the recorder ran them (no THP, MADV_COLLAPSE
				    fails) */
	int figures_only;         /* the figures and series measures alone (thpsim bench
				     times the others against them) */
	int layouts;              /* replay_run_layouts: how many (--layouts; 0: the default,
				     REPLAY_LAYOUTS_DEFAULT) */
	int layout;               /* the address layout: 0 the recorded one, k > 0
				     the k-th drawn from layout_seed (layout.c) */
	uint64_t layout_seed;
	int heap_chosen;          /* under layout > 0, the heap's shift is heap_shift (mod
				     2 MiB), not the drawn one (ranges.c chooses it) */
	int64_t heap_shift;
	int mmap_chosen;          /* the same for the mmap base: mmap_shift down (mod 2 MiB) */
	int64_t mmap_shift;
	int layout_probe;         /* under layout 0: find which regions' shifts can change
				     the figures (result's layout_sensitive; layout.c) */
	/* the memory cgroup (--memory-max, --memory-high; bytes,
	 * THPS_MEMCG_NOLIMIT for none): with limit_set these, else the
	 * recorded program's own cgroup limits from the trace header, unless
	 * no_limit */
	int limit_set, no_limit;
	uint64_t memory_max, memory_high;
	/* --free-blocks: the machine's free memory, blocks of each order 0..10
	 * as /proc/buddyinfo counts them (thps_shape_free); its RAM follows */
	int nfree_blocks;
	uint64_t free_blocks[11];
	uint64_t sample_every_ms; /* --sample-ms: also a point of every series at each
				     multiple of this much trace time (never thinned);
				     0: none */
};

/*
 * The work a policy costs (measure_work.c): the kernel's own counters of
 * THP work (/proc/vmstat, hugepages-<size>kB/stats/), each with the bytes
 * one event allocates (zeroed or copied into), when it first and last
 * happened, and the busiest interval between two samples of the series.
 * Rows: REPLAY_WORK_VM's events, then anon_fault_alloc and
 * anon_fault_fallback of each mTHP size below the PMD's (16 KiB to 1 MiB).
 */
#define REPLAY_WORK_VM(X)                                                                           \
	X(thp_fault_alloc, 2048, "THPs allocated and zeroed at a fault")                            \
	X(thp_fault_fallback, 0, "faults that could have had a THP and took 4 KiB pages")           \
	X(thp_fault_fallback_charge, 0, "of those, for the memory cgroup's limit")                  \
	X(thp_zero_page_alloc, 2048, "huge zero pages allocated and zeroed")                        \
	X(thp_split_pmd, 0, "PMD mappings split into page tables (mprotect, munmap, COW, ...)")     \
	X(thp_deferred_split_page, 0, "THPs queued to be split (partly unmapped)")                  \
	X(thp_split_page, 0, "THPs split into pages")                                               \
	X(thp_underused_split_page, 0, "THPs split by the underused-THP shrinker")                  \
	X(thp_collapse_alloc, 2048, "THPs made by collapse (khugepaged, MADV_COLLAPSE), 2 MiB copied or zeroed") \
	X(thp_collapse_alloc_failed, 0, "collapses that could not allocate a THP")
#define REPLAY_WORK_VM_ENUM(name, kb, desc) REPLAY_WORK_##name,
#define REPLAY_WORK_MTHP_ORDERS (THPS_MTHP_MAX_ORDER - THPS_MTHP_MIN_ORDER) /* 16K..1M */
enum {
	REPLAY_WORK_VM(REPLAY_WORK_VM_ENUM) REPLAY_WORK_MTHP,
	REPLAY_NR_WORK = REPLAY_WORK_MTHP + 2 * REPLAY_WORK_MTHP_ORDERS
};
#undef REPLAY_WORK_VM_ENUM

struct replay_work {
	uint64_t count, kb_each;
	uint64_t first_ns, last_ns;  /* the end of the interval it was first, last seen in */
	uint64_t busiest, busiest_from_ns, busiest_to_ns; /* the most in one interval */
};
/* A row's name (the kernel's: "thp_split_pmd", "anon_fault_alloc 64kB")
 * and what it counts. */
const char *replay_work_name(int row, char *buf, size_t len);
const char *replay_work_desc(int row);

struct replay_result {
	struct replay_mm **mms;  /* every address space, in the order they began */
	int nmms, capmms;
	char **callers;          /* the CALLER records' chains, each once */
	int ncallers, capcallers;
	struct replay_series overall; /* sum over live address spaces, and the machine */
	uint64_t overall_peak_rss_kb, overall_peak_anon_huge_kb;
	/* the machine-wide figures that mean something for several processes
	 * (a page shared after fork counts once): meminfo's AnonPages and
	 * AnonHugePages at their peak (at every sample and every exit), and
	 * at the end: when the last process alive ended, or at the end of
	 * the trace for those still alive; with the sum of their Pss, which
	 * in the model (anonymous memory only) equals AnonPages */
	uint64_t peak_anon_pages_kb, peak_meminfo_huge_kb;
	uint64_t settle_ms, settle_collapsed; /* --settle: how long, and khugepaged's collapses */
	/* khugepaged during the trace (and the settling): wake-ups, 2 MiB
	 * ranges collapsed, and the settings it ran with */
	uint64_t khugepaged_wakeups, khugepaged_collapsed;
	uint64_t khugepaged_scan_sleep_ms, khugepaged_pages_to_scan;
	int khugepaged_on;
	/* when a first mm registered with khugepaged (ns of the trace), the
	 * moment its phase counts from; khugepaged_registered 0: none did */
	uint64_t khugepaged_registered_ns;
	int khugepaged_registered;
	uint64_t final_meminfo[THPS_NR_MEMINFO_ITEMS];
	uint64_t final_pss_sum_kb;
	uint64_t vm[THPS_NR_VM_ITEMS]; /* /proc/vmstat at the end */
	/* hugepages-<size>kB/stats/ at the end, by order */
	uint64_t mthp[THPS_MTHP_MAX_ORDER + 1][THPS_NR_MTHP_STATS];
	struct replay_coverage coverage; /* measure_occupancy.c */
	struct replay_access access;     /* measure_access.c */
	/* the work the policy cost (measure_work.c) */
	struct replay_work work[REPLAY_NR_WORK];
	uint64_t work_seen[REPLAY_NR_WORK]; /* the counts at the last tick */
	uint64_t work_seen_ns;
	uint64_t records, faults, syscalls, lost_events, duration_ns;
	uint64_t madv_hugepage_calls, madv_collapse_calls; /* made in the model */
	/* with layout_probe: the regions (REPLAY_REGION_*) whose shift within
	 * 2 MiB can change the figures; -1: not probed */
	int layout_sensitive;
	/* under the recorded layout: the heap shifts (pages within 2 MiB) that
	 * put a recorded heap boundary (an exec's start of the heap, a break
	 * brk set) on a 2 MiB boundary (ranges.c's classes of heap offset) */
	uint8_t heap_breaks[REPLAY_HEAP_OFFSETS];
	/* the same for what the mmap base places (the shift down that puts a
	 * boundary on 2 MiB), unless mmap_unclassed: a mapping recorded off a
	 * boundary that the kernel would align in another layout */
	uint8_t mmap_breaks[REPLAY_HEAP_OFFSETS];
	int mmap_unclassed;
	uint64_t skips[REPLAY_NR_SKIPS];
	/* the memory cgroup: whether a limit applied, where it came from
	 * ("--memory-max", "the trace"), and memory.current, memory.peak
	 * and memory.events at the end */
	int limited;
	const char *limit_from;
	struct thps_memcg_stat memcg;
	int oom_kills;
	double seconds;          /* wall time of the replay */
	/* the knobs in force */
	int nknobs;
	char knob_name[REPLAY_MAX_KNOBS][64];
	char knob_value[REPLAY_MAX_KNOBS][32];
	/* settings of the recording machine the model does not have */
	char unmodelled_knobs[512];
	char notes[8][256];      /* the first few things worth a warning */
	int nnotes;
	/* the trace stopped early (its writing was cut short, or it is
	 * damaged): the figures are those of the records before the damage,
	 * and processes still alive there end as "trace cut" */
	int partial;
	char partial_why[768];   /* the reader's message: where and what */
	uint64_t partial_offset; /* file offset where reading stopped */
	uint64_t partial_missing_bytes; /* bytes of the file after it */
	struct replay_ranges *ranges; /* replay_run_layouts: the figures of every layout */
	char command[512];       /* what was recorded */
	char kernel[128];
};

/* Of the accessed pages the model mapped, over every sample, the percent
 * a PMD maps; -1 without samples (measure_access.c). */
double replay_access_pmd_pct(const struct replay_result *res);

/* Replay the trace at path.  0, or a negative errno with err set (the
 * trace cannot be opened, a knob is bad).  A trace damaged or cut short
 * after its header is replayed up to the damage: 0 with res->partial. */
int replay_run(const char *path, const struct replay_opts *o, struct replay_result *res,
	       char *err, size_t errlen);
void replay_result_free(struct replay_result *res);

/*
 * The trace under several address layouts (ranges.c): layout 0, the
 * recorded one, into res (its figures are the report's), then layouts 1
 * to o->layouts-1 on up to threads threads, whose figures with layout 0's
 * make res->ranges.  When the figures cannot depend on the layout (no
 * THP can happen under the policy), only layout 0 runs and
 * res->ranges->fixed says why.  Returns as replay_run.
 */
#define RANGE_MACHINE_FIGURES(X)                                                     \
	X(peak_AnonPages, "peak AnonPages", r->peak_anon_pages_kb)                      \
	X(peak_AnonHugePages, "peak AnonHugePages", r->peak_meminfo_huge_kb)            \
	X(final_AnonPages, "final AnonPages", r->final_meminfo[THPS_MEM_AnonPages])     \
	X(final_AnonHugePages, "final AnonHugePages", r->final_meminfo[THPS_MEM_AnonHugePages]) \
	X(thp_fault_alloc, "thp_fault_alloc", r->vm[THPS_VM_thp_fault_alloc])           \
	X(thp_fault_fallback, "thp_fault_fallback", r->vm[THPS_VM_thp_fault_fallback])  \
	X(thp_collapse_alloc, "thp_collapse_alloc", r->vm[THPS_VM_thp_collapse_alloc])  \
	X(thp_split_pmd, "thp_split_pmd", r->vm[THPS_VM_thp_split_pmd])                  \
	X(memory_peak, "memory.peak", r->memcg.peak_bytes >> 10)                          \
	X(oom_kills, "OOM kills", (uint64_t)r->oom_kills)
#define RANGE_MM_FIGURES(X)                                                           \
	X(Anonymous, "final Anonymous", mm->final[THPS_PROC_Anonymous])                  \
	X(AnonHugePages, "final AnonHugePages", mm->final[THPS_PROC_AnonHugePages])      \
	X(Rss, "final Rss", mm->final[THPS_PROC_Rss])                                    \
	X(VmHWM, "peak Rss", mm->final[THPS_PROC_VmHWM])                                 \
	X(peak_AnonHugePages, "peak AnonHugePages", mm->peak_anon_huge_kb)
#define RANGE_ENUM(name, label, expr) RANGE_##name,
#define RANGE_MM_ENUM(name, label, expr) RANGE_MM_##name,
enum { RANGE_MACHINE_FIGURES(RANGE_ENUM) RANGE_NR_MACHINE };
enum { RANGE_MM_FIGURES(RANGE_MM_ENUM) RANGE_NR_MM };
#undef RANGE_ENUM
#undef RANGE_MM_ENUM

#define REPLAY_MAX_PHASES 18 /* at once, 16 moments, asleep (ranges.c) */
struct replay_ranges {
	int asked, n;            /* runs: layouts asked for, and runs made (layouts x phases) */
	int layouts, phases;     /* run k is layout k / phases under phase k % phases */
	uint64_t phase_ms[REPLAY_MAX_PHASES]; /* khugepaged's phases; UINT64_MAX: asleep
				    through the trace */
	char phase_why[320];     /* why the phase varies, or does not */
	uint64_t seed;
	char fixed[256];         /* not empty: why the layout cannot matter */
	uint64_t *machine;       /* [RANGE_NR_MACHINE][n]: each layout's */
	double *weight;          /* [n]: the share of Linux's layouts each stands for */
	int heap_classes;        /* heap offsets that give different heaps (0: none seen) */
	int64_t *heap_shift;     /* [layouts]: the heap's shift chosen for layout k, or -1: drawn */
	int mmap_classes;        /* the same for the mmap base, where only its place matters */
	int64_t *mmap_shift;     /* [layouts]: the mmap base's shift down, or -1: drawn */
	int nmms;                /* processes matched in every layout (0: none) */
	uint64_t *mm;            /* [nmms][RANGE_NR_MM][n] */
	struct replay_series *overall; /* [n]: each run's machine series over time
				    (run 0's is the result's own: empty here) */
	double seconds;          /* wall time of all the layouts */
	int *same_as;            /* [n]: -1, or the run whose figures run k's are: no
				    shift of it can change them (its heap in the same class,
				    and no other region's shift matters) */
	int made;                /* runs made (n less those that are the same as another) */
	int sensitive;           /* layout 0's probe: the regions (REPLAY_REGION_*) whose
				    place within 2 MiB can change the figures; -1: not probed */
};
#define REPLAY_LAYOUTS_DEFAULT 16 /* --layouts: the default count and the most */
#define REPLAY_LAYOUTS_MAX 1024
int replay_run_layouts(const char *path, const struct replay_opts *o, int threads,
		       struct replay_result *res, char *err, size_t errlen);
void replay_ranges_free(struct replay_ranges *g);
/* The lowest, the median (the lower middle) and the highest of v[0..n);
 * with weights w (NULL: all alike), the weighted median. */
void replay_spread(const uint64_t *v, int n, uint64_t out[3]);
void replay_spread_weighted(const uint64_t *v, const double *w, int n, uint64_t out[3]);
const char *replay_range_machine_name(int f);
/* The band over time: the lowest and the highest of the machine's meminfo
 * AnonPages (huge 0) or AnonHugePages (huge 1) at time t_ns over every run
 * of res's layouts (each run's series a step: its last point at or before
 * t_ns).  Without ranges, run 0's value twice. */
void replay_band_at(const struct replay_result *res, uint64_t t_ns, int huge, uint64_t *lo,
		    uint64_t *hi);
const char *replay_range_mm_name(int f);

/* Layout k's shifts from the recorded layout, in bytes (layout.c): the
 * executable's and the heap's up (the heap's: above the exe's; with heap
 * >= 0, the one that is heap modulo 2 MiB), the mmap base's and the
 * stack's down (with mmap >= 0, mmap modulo 2 MiB down); all 0 for k = 0. */
struct replay_shifts {
	int64_t exe, brk, mmap, stack;
};
void replay_layout_shifts(uint64_t seed, int k, int64_t heap, int64_t mmap,
			  struct replay_shifts *s);

/* The measures' own output (measure.h): their members of a process's JSON
 * object and of the result's, and their sections of the text report. */
void replay_measures_json_mm(struct json *j, const struct replay_mm *mm);
void replay_measures_json(struct json *j, const struct replay_result *res);
void replay_measures_text(FILE *f, const struct replay_result *res);

/* The kind of the mapping at addr in mm now (REPLAY_MAP_other where no
 * recorded call made one), from the mappings measure. */
int replay_kind_at(const struct replay_mm *mm, uint64_t addr);
/* The occupancy of every address space summed (at each one's end, or at
 * each one's peak). */
void replay_occupancy_sum(const struct replay_result *res, int peak, struct replay_occupancy *out);

/* Attribution by mapping, rolled up by kind over every address space
 * (measure_mappings.c): final figures each taken at its address space's
 * end, peak ones at its peak; kind REPLAY_NR_MAP_KINDS is the pages
 * written in private file mappings (anonymous copies in the kernel, not
 * in the model's figures: final only). */
struct replay_kind_sum {
	int kind;
	uint64_t mappings;
	struct replay_map_figures final, peak;
};
#define REPLAY_NR_KIND_ROWS (REPLAY_NR_MAP_KINDS + 1)
/* out sorted by final Anonymous, the largest first; returns the rows. */
int replay_kind_sums(const struct replay_result *res, struct replay_kind_sum out[REPLAY_NR_KIND_ROWS]);
const char *replay_kind_row_name(int kind);
const char *replay_kind_row_label(int kind);

#endif
