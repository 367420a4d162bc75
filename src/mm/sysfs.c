/*
 * sysfs.c - the knobs: /sys/kernel/mm/transparent_hugepage/... and the
 * model's own under thpsim/ (mirrors the sysfs half of mm/huge_memory.c).
 *
 * Each knob is one row of knob_defs: its sysfs name, its values, where it
 * lives in struct knobs, its help line, the values the fuzzers try, how
 * the kernel runner treats a scenario's setting of it, its default, and
 * the profile knob that says whether a kernel has the file at all.
 * Everything that lists knobs reads this table: --set, 'thpsim knobs',
 * the trace header, kernel profiles, the fuzzers, the kernel runner.
 * Defaults are those of Linux 6.18 built with
 * CONFIG_TRANSPARENT_HUGEPAGE_MADVISE, on a machine with a zero page.
 *
 * Kernel profiles.  The thpsim/ knobs are the behaviour that differs
 * between kernels and that sysfs does not show.  profile_changes lists,
 * per knob, the Linux version from which each value holds and the change
 * that made it; "thpsim/kernel=X.Y" sets every knob of the table to its
 * value in Linux X.Y.  Only this table knows versions: everything else
 * asks a knob.  Items a build decides (thpsim/pt_reclaim, a persistent huge
 * zero page) take the version's default configuration here; the host's
 * detection (util/kprofile.c) overrides them with what it found.
 * thpsim/zero_page is no version's: a boot or an architecture decides it,
 * so thpsim/kernel leaves it as it is.
 */
#include <limits.h>

#include "internal.h"

struct knob_def {
	const char *name;
	const char *const *values; /* NULL: an integer in [min, max] */
	int min, max;
	size_t offset;             /* into struct knobs */
	const char *help;
	const char *const *fuzz;   /* the values the fuzzers try (NULL: they leave it alone) */
	enum thps_knob_kernel kernel; /* how the kernel runner treats a scenario's setting */
	int def;                   /* the default: the number, or the index in values; a
				    * knob of profile_changes takes KERNEL_DEFAULT's */
	const char *needs;         /* a thpsim/ knob that is 0 on kernels without this
				    * file, which behave as its default (NULL: all have it) */
};

/* A NULL-terminated list of values, for the fuzz column. */
#define FUZZ(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define FUZZ_BOOL FUZZ("1", "0")

static const char *const enabled_values[] = { "always", "madvise", "never", NULL };
static const char *const size_enabled_values[] = { "always", "madvise", "never", "inherit", NULL };
static const char *const defrag_values[] = { "always", "defer", "defer+madvise", "madvise", "never",
					     NULL };
static const char *const lifetime_values[] = { "refcount", "per-mm", "persistent", NULL };
static const char *const hzp_wp_values[] = { "alloc-or-pte", "split", "alloc-or-split", NULL };
static const char *const thp_cow_values[] = { "copy", "split", NULL };
static const char *const deferred_split_values[] = { "unmap-and-split", "unmap", "partial", NULL };
static const char *const anon_thp_align_values[] = { "none", "pmd-or-larger", "pmd-multiple", NULL };

#define K(field) offsetof(struct knobs, field)
static const struct knob_def knob_defs[] = {
	{ "transparent_hugepage/enabled", enabled_values, 0, 0, K(enabled),
	  "always|madvise|never: when a fault may map a THP",
	  FUZZ("always", "madvise", "never"), THPS_KNOB_KERNEL_MODE, THP_MADVISE, NULL },
	{ "transparent_hugepage/hugepages-2048kB/enabled", size_enabled_values, 0, 0,
	  K(hugepages_enabled[9]),
	  "always|madvise|never|inherit: the PMD size's own setting (Linux 6.8+)",
	  FUZZ("inherit", "always", "madvise", "never"), THPS_KNOB_KERNEL_PMD_MODE, THP_INHERIT,
	  NULL },
#define MTHP_ROW(kb, order)                                                                  \
	{ "transparent_hugepage/hugepages-" #kb "kB/enabled", size_enabled_values, 0, 0,       \
	  K(hugepages_enabled[order]),                                                       \
	  "always|madvise|never|inherit: may a fault map a " #kb " KiB anonymous folio "       \
	  "(multi-size THP, Linux 6.8+; default never)",                                     \
	  FUZZ("never", "always", "madvise", "inherit"), THPS_KNOB_KERNEL_MATCH, THP_NEVER,      \
	  "thpsim/mthp" }
	MTHP_ROW(16, 2),
	MTHP_ROW(32, 3),
	MTHP_ROW(64, 4),
	MTHP_ROW(128, 5),
	MTHP_ROW(256, 6),
	MTHP_ROW(512, 7),
	MTHP_ROW(1024, 8),
#undef MTHP_ROW
	{ "transparent_hugepage/defrag", defrag_values, 0, 0, K(defrag),
	  "always|defer|defer+madvise|madvise|never: may a fault's THP allocation reclaim",
	  FUZZ("madvise", "always", "defer", "defer+madvise", "never"), THPS_KNOB_KERNEL_MATCH,
	  DEFRAG_MADVISE, NULL },
	{ "transparent_hugepage/use_zero_page", NULL, 0, 1, K(use_zero_page),
	  "0|1: map the huge zero page on read faults (Linux 3.8+)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_MATCH, 1, NULL },
	{ "transparent_hugepage/shrink_underused", NULL, 0, 1, K(shrink_underused),
	  "0|1: the deferred-split shrinker also splits underused THPs (Linux 6.12+)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_MATCH, 1, NULL },
	{ "transparent_hugepage/khugepaged/max_ptes_none", NULL, 0, HPAGE_PMD_NR - 1,
	  K(max_ptes_none), "0..511: none and zero-page entries khugepaged collapses over; "
	  "zero-filled subpages a THP may hold before it is underused",
	  FUZZ("511", "0", "1", "64", "256", "510"), THPS_KNOB_KERNEL_MATCH, HPAGE_PMD_NR - 1,
	  NULL },
	{ "transparent_hugepage/khugepaged/max_ptes_shared", NULL, 0, HPAGE_PMD_NR - 1,
	  K(max_ptes_shared), "0..511: pages mapped by another process (after fork) khugepaged "
	  "collapses over",
	  FUZZ("256", "0", "1", "511"), THPS_KNOB_KERNEL_MATCH, HPAGE_PMD_NR / 2, NULL },
	{ "transparent_hugepage/khugepaged/max_ptes_swap", NULL, 0, HPAGE_PMD_NR - 1,
	  K(max_ptes_swap), "0..511: swap entries khugepaged collapses over (no swap is "
	  "modelled: accepted, no effect)",
	  NULL, THPS_KNOB_KERNEL_MATCH, HPAGE_PMD_NR / 8, NULL },
	{ "transparent_hugepage/khugepaged/pages_to_scan", NULL, 1, INT_MAX, K(pages_to_scan),
	  "pages (4 KiB units of progress) khugepaged scans per wake-up",
	  NULL, THPS_KNOB_KERNEL_MATCH, HPAGE_PMD_NR * 8, NULL },
	{ "transparent_hugepage/khugepaged/scan_sleep_millisecs", NULL, 0, INT_MAX,
	  K(scan_sleep_millisecs), "simulated ms khugepaged sleeps between wake-ups",
	  NULL, THPS_KNOB_KERNEL_MATCH, 10000, NULL },
	{ "transparent_hugepage/khugepaged/alloc_sleep_millisecs", NULL, 0, INT_MAX,
	  K(alloc_sleep_millisecs), "simulated ms khugepaged sleeps after a failed THP "
	  "allocation",
	  NULL, THPS_KNOB_KERNEL_MATCH, 60000, NULL },
	{ "transparent_hugepage/khugepaged/defrag", NULL, 0, 1, K(khugepaged_defrag),
	  "0|1: may khugepaged's THP allocation reclaim",
	  NULL, THPS_KNOB_KERNEL_MATCH, 1, NULL },
	{ "thpsim/huge_zero_page_lifetime", lifetime_values, 0, 0, K(hzp_lifetime),
	  "refcount (Linux 3.8-4.8: a global reference per mapping) | per-mm (Linux 4.9+: one "
	  "per address space) | persistent (never freed: the series at patch 9, "
	  "CONFIG_PERSISTENT_HUGE_ZERO_FOLIO)",
	  FUZZ("per-mm", "refcount", "persistent"), THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/huge_zero_wp", hzp_wp_values, 0, 0, K(hzp_wp),
	  "write fault on the huge zero page: alloc-or-pte (Linux 3.8-3.14: new THP, else a PTE "
	  "table with one page) | split (Linux 5.8-6.12: split, copy 4 KiB) | alloc-or-split "
	  "(Linux 3.15-5.7 and 6.13+: new THP, else split)",
	  FUZZ("alloc-or-split", "alloc-or-pte", "split"), THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/thp_cow", thp_cow_values, 0, 0, K(thp_cow),
	  "write fault on a THP shared after fork: copy (Linux 3.8-5.7: copy 2 MiB) | split "
	  "(Linux 5.8+: split the PMD, copy 4 KiB)",
	  FUZZ("split", "copy"), THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/zero_page", NULL, 0, 1, K(zero_page),
	  "1: read faults map the shared zero page and the huge zero page | 0: they allocate "
	  "as writes do, as on a kernel booted with pvm_no_zero_page=1 (with "
	  "split_remap_zero=0: where mm_forbids_zeropage, s390 KVM guests)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 1, NULL },
	{ "thpsim/pt_reclaim", NULL, 0, 1, K(pt_reclaim),
	  "1: MADV_DONTNEED frees a PTE table it emptied (CONFIG_PT_RECLAIM, Linux 6.14+) | 0: "
	  "the empty table stays in VmPTE",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/split_remap_zero", NULL, 0, 1, K(split_remap_zero),
	  "1: splitting a THP maps its zero-filled subpages to the zero page (Linux 6.12+) | 0: "
	  "they stay pages",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/underused_shrinker", NULL, 0, 1, K(underused_shrinker),
	  "1: the deferred-split shrinker splits underused THPs, thp_underused_split_page "
	  "(Linux 6.12+) | 0: no such shrinker",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/mprotect_pmd_writable", NULL, 0, 1, K(mprotect_pmd_writable),
	  "1: mprotect making an exclusive THP writable again writes its PMD writable (Linux "
	  "6.2+) | 0: the next write faults",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/deferred_split", deferred_split_values, 0, 0, K(deferred_split),
	  "when a THP is queued for deferred split and thp_deferred_split_page counts: "
	  "unmap-and-split (Linux 3.8-6.1: when any page loses its last mapping, even as the "
	  "whole THP is unmapped, and as a split unmaps it) | unmap (Linux 6.2-6.9: not as a "
	  "split unmaps it) | partial (Linux 6.10+: only when left partially mapped)",
	  FUZZ("partial", "unmap", "unmap-and-split"), THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/collapse_ro", NULL, 0, 1, K(collapse_ro),
	  "1: MADV_COLLAPSE collapses a range none of whose entries is writable (Linux 6.18+) | "
	  "0: it refuses it (SCAN_PAGE_RO: after fork, until a write fault)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/wp_reuse_large", NULL, 0, 1, K(wp_reuse_large),
	  "1: a write fault on a read-only page of a PTE-mapped large folio that only this "
	  "process maps reuses it (Linux 6.15+, __wp_can_reuse_large_anon_folio) | 0: it copies "
	  "4 KiB, leaving the folio partially mapped",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/mthp", NULL, 0, 1, K(mthp),
	  "1: a fault may map an anonymous folio of any size hugepages-<size>kB/enabled allows "
	  "(multi-size THP, Linux 6.8+) | 0: only 4 KiB pages and 2 MiB THPs (the sizes below "
	  "2 MiB are not offered)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/collapse_pte_batch", NULL, 0, 1, K(collapse_pte_batch),
	  "1: a collapse unmaps the entries of a PTE-mapped THP together (Linux 6.17+: it is "
	  "never seen partially mapped) | 0: one entry at a time (the first queues it for "
	  "deferred split)",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/anon_thp_align", anon_thp_align_values, 0, 0, K(anon_thp_align),
	  "which anonymous mmaps without an address get a 2 MiB-aligned one: none (Linux "
	  "3.8-6.6) | pmd-or-larger (Linux 6.7-6.11: 2 MiB or more) | pmd-multiple (Linux 6.12+: "
	  "a multiple of 2 MiB; MAP_STACK and PR_SET_THP_DISABLE too)",
	  FUZZ("pmd-multiple", "none", "pmd-or-larger"), THPS_KNOB_KERNEL_PROFILE, 0, NULL },
	{ "thpsim/map_stack_nohugepage", NULL, 0, 1, K(map_stack_nohugepage),
	  "1: mmap with MAP_STACK sets VM_NOHUGEPAGE (Linux 6.7+) | 0: MAP_STACK changes nothing",
	  FUZZ_BOOL, THPS_KNOB_KERNEL_PROFILE, 0, NULL },
};
#undef K

/*
 * The kernel versions: from "since" on, knob has value, because of change.
 * Rows of one knob are in version order; the first is its value in 3.8.
 */
static const struct thps_profile_change profile_changes[] = {
	{ "thpsim/huge_zero_page_lifetime", "3.8", "refcount",
	  "thp: implement refcounting for huge zero page (the series, patch 10)" },
	{ "thpsim/huge_zero_page_lifetime", "4.9", "per-mm",
	  "thp: reduce usage of huge zero page's atomic counter (Aaron Lu)" },
	{ "thpsim/huge_zero_wp", "3.8", "alloc-or-pte",
	  "thp: do_huge_pmd_wp_page(): handle huge zero page (the series, patch 4)" },
	{ "thpsim/huge_zero_wp", "3.15", "alloc-or-split",
	  "mm, thp: drop do_huge_pmd_wp_zero_page_fallback() (Kirill Shutemov): without a THP "
	  "the PMD is split" },
	{ "thpsim/huge_zero_wp", "5.8", "split",
	  "thp: change CoW semantics for anon-THP (3917c80280c9, Kirill Shutemov)" },
	{ "thpsim/huge_zero_wp", "6.13", "alloc-or-split",
	  "mm: allocate THP on hugezeropage wp-fault (1ced09e0331f, Dev Jain; "
	  "do_huge_zero_wp_pmd)" },
	{ "thpsim/thp_cow", "3.8", "copy", "do_huge_pmd_wp_page copies the whole huge page" },
	{ "thpsim/thp_cow", "5.8", "split",
	  "thp: change CoW semantics for anon-THP (3917c80280c9): split the PMD, copy 4 KiB" },
	{ "thpsim/pt_reclaim", "3.8", "0", "MADV_DONTNEED leaves empty PTE tables" },
	{ "thpsim/pt_reclaim", "6.14", "1",
	  "mm: pgtable: reclaim empty PTE page in madvise(MADV_DONTNEED) (6375e95f381e, Qi "
	  "Zheng; CONFIG_PT_RECLAIM, default y on x86-64)" },
	{ "thpsim/split_remap_zero", "3.8", "0", "a split THP keeps its zero-filled pages" },
	{ "thpsim/split_remap_zero", "6.12", "1",
	  "mm: remap unused subpages to shared zeropage when splitting isolated thp "
	  "(b1f202060afe)" },
	{ "thpsim/underused_shrinker", "3.8", "0", "the deferred-split shrinker splits only "
	  "queued partially mapped THPs" },
	{ "thpsim/underused_shrinker", "6.12", "1",
	  "mm: split underused THPs (dafff3f4c850, thp_underused_split_page) and the "
	  "shrink_underused file (81d3ff3c6f76)" },
	{ "thpsim/mprotect_pmd_writable", "3.8", "0", "change_huge_pmd keeps a private PMD "
	  "read-only" },
	{ "thpsim/mprotect_pmd_writable", "6.2", "1",
	  "mm/huge_memory: try avoiding write faults when changing PMD protection "
	  "(c27f479ef542, can_change_pmd_writable)" },
	{ "thpsim/deferred_split", "3.8", "unmap-and-split",
	  "page_remove_rmap queues the compound page whenever a subpage loses its last "
	  "mapping, and __split_huge_pmd_locked's freeze loop removes each one" },
	{ "thpsim/deferred_split", "6.2", "unmap",
	  "mm,thp,rmap: clean up the end of __split_huge_pmd_locked() (Hugh Dickins): a split "
	  "no longer queues" },
	{ "thpsim/deferred_split", "6.10", "partial",
	  "mm/rmap: do not add fully unmapped large folio to deferred split list (7491f3f34891)" },
	{ "thpsim/collapse_ro", "3.8", "0",
	  "hpage_collapse_scan_pmd and __collapse_huge_page_isolate want a writable entry "
	  "(SCAN_PAGE_RO)" },
	{ "thpsim/collapse_ro", "6.18", "1",
	  "mm: enable khugepaged to operate on non-writable VMAs (Dev Jain): the SCAN_PAGE_RO "
	  "check is gone" },
	{ "thpsim/collapse_pte_batch", "3.8", "0",
	  "__collapse_huge_page_copy_succeeded removes each entry's rmap by itself" },
	{ "thpsim/collapse_pte_batch", "6.17", "1",
	  "khugepaged: optimize __collapse_huge_page_copy_succeeded() by PTE batching (Dev Jain)" },
	{ "thpsim/wp_reuse_large", "3.8", "0",
	  "wp_can_reuse_anon_folio: a page of a large folio is never reused" },
	{ "thpsim/wp_reuse_large", "6.15", "1",
	  "mm: MM owner tracking for large folios (David Hildenbrand): "
	  "__wp_can_reuse_large_anon_folio" },
	{ "thpsim/anon_thp_align", "3.8", "none",
	  "get_unmapped_area gives anonymous mappings no THP alignment" },
	{ "thpsim/anon_thp_align", "6.7", "pmd-or-larger",
	  "mm: align larger anonymous mappings on THP boundaries (efa7df3e3bb5, Rik van Riel; "
	  "first release recalled, not checked: 6.7)" },
	{ "thpsim/anon_thp_align", "6.12", "pmd-multiple",
	  "mm, mmap: limit THP alignment of anonymous mappings to PMD-aligned sizes "
	  "(d4148aeab412, Vlastimil Babka)" },
	{ "thpsim/map_stack_nohugepage", "3.8", "0", "MAP_STACK is accepted and ignored" },
	{ "thpsim/map_stack_nohugepage", "6.7", "1",
	  "mm: mmap: map MAP_STACK to VM_NOHUGEPAGE (c4608d1bf7c6, Yang Shi)" },
	{ "thpsim/mthp", "3.8", "0", "anonymous faults map 4 KiB pages or 2 MiB THPs" },
	{ "thpsim/mthp", "6.8", "1",
	  "mm: thp: support allocation of anonymous multi-size THP (Ryan Roberts): "
	  "hugepages-<size>kB/enabled for 16 KiB to 1 MiB, alloc_anon_folio" },
};

#define KERNEL_KNOB "thpsim/kernel"
#define NR_KNOBS ((int)ARRAY_SIZE(knob_defs) + 1)
#define KERNEL_OLDEST KERNEL_VERSION(3, 8)
#define KERNEL_DEFAULT "6.18"

const struct thps_profile_change *thps_profile_change(int i)
{
	if (i < 0 || i >= (int)ARRAY_SIZE(profile_changes))
		return NULL;
	return &profile_changes[i];
}

/* "X.Y" or "X.Y.Z": KERNEL_VERSION(X, Y), or -1. */
static int parse_kernel_version(const char *s)
{
	char *end;
	long a, b;

	if (*s < '0' || *s > '9')
		return -1;
	a = strtol(s, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtol(end + 1, &end, 10);
	if (*end == '.') {
		if (end[1] < '0' || end[1] > '9')
			return -1;
		strtol(end + 1, &end, 10);
	}
	if (*end || a > 99 || b > 255)
		return -1;
	return KERNEL_VERSION((int)a, (int)b);
}

static const struct knob_def *find_knob(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(knob_defs); i++)
		if (!strcmp(knob_defs[i].name, name))
			return &knob_defs[i];
	return NULL;
}

static int parse_value(const struct knob_def *d, const char *value, int *out)
{
	if (d->values) {
		for (int i = 0; d->values[i]; i++)
			if (!strcmp(d->values[i], value)) {
				*out = i;
				return 0;
			}
		return -EINVAL;
	}
	{
		char *end;
		long v = strtol(value, &end, 10);

		if (!*value || *end || v < d->min || v > d->max)
			return -EINVAL;
		*out = (int)v;
	}
	return 0;
}

static int *knob_field(struct knobs *k, const struct knob_def *d)
{
	return (int *)((char *)k + d->offset);
}

/* Every thpsim/ knob set to its value in kernel version ver. */
static void profile_for_version(struct knobs *k, int ver)
{
	for (size_t i = 0; i < ARRAY_SIZE(profile_changes); i++) {
		const struct thps_profile_change *c = &profile_changes[i];
		const struct knob_def *d = find_knob(c->knob);
		int v;

		if (parse_kernel_version(c->since) > ver)
			continue;
		if (d && !parse_value(d, c->value, &v))
			*knob_field(k, d) = v;
	}
	k->kernel = ver;
}

void knobs_init(struct knobs *k)
{
	for (size_t i = 0; i < ARRAY_SIZE(knob_defs); i++)
		*knob_field(k, &knob_defs[i]) = knob_defs[i].def;
	profile_for_version(k, parse_kernel_version(KERNEL_DEFAULT));
}

const char *thps_knob_name(int i)
{
	if (i < 0 || i >= NR_KNOBS)
		return NULL;
	return i < (int)ARRAY_SIZE(knob_defs) ? knob_defs[i].name : KERNEL_KNOB;
}

const char *thps_knob_help(int i)
{
	if (i < 0 || i >= NR_KNOBS)
		return NULL;
	if (i < (int)ARRAY_SIZE(knob_defs))
		return knob_defs[i].help;
	return "X.Y (3.8 or later): set the thpsim/ knobs to Linux X.Y's behaviour in its default "
	       "configuration; thpsim/zero_page stays ('thpsim kernel-profile' shows this "
	       "machine's)";
}

int thps_knob_index(const char *name)
{
	for (int i = 0; thps_knob_name(i); i++)
		if (!strcmp(thps_knob_name(i), name))
			return i;
	return -1;
}

const char *thps_knob_fuzz_value(int i, int v)
{
	/* thpsim/kernel: the versions where a profile knob changes that the
	 * fuzzers have always tried */
	static const char *const kernel_fuzz[] = { "6.18", "3.8", "4.9", "5.8", "6.1", "6.12",
						   "6.13", NULL };
	const char *const *values;
	int n = 0;

	if (i < 0 || i >= NR_KNOBS || v < 0)
		return NULL;
	values = i < (int)ARRAY_SIZE(knob_defs) ? knob_defs[i].fuzz : kernel_fuzz;
	while (values && values[n] && n < v)
		n++;
	return values && n == v ? values[n] : NULL;
}

int thps_knob_kernel(int i)
{
	if (i < 0 || i >= NR_KNOBS)
		return -1;
	return i < (int)ARRAY_SIZE(knob_defs) ? (int)knob_defs[i].kernel : THPS_KNOB_KERNEL_PROFILE;
}

const char *thps_knob_of_kernel(int kernel)
{
	for (int i = 0; thps_knob_name(i); i++)
		if (thps_knob_kernel(i) == kernel)
			return thps_knob_name(i);
	return NULL;
}

static int set_lifetime_locked(thps_machine *m, int v)
{
	if (v != m->knobs.hzp_lifetime && READ_ONCE(m->huge_zero_pfn) != NO_PFN)
		return machine_error(m, -EBUSY,
				     "thpsim/huge_zero_page_lifetime: cannot change while the huge "
				     "zero page exists (set it before the first read fault, or "
				     "drop caches after the processes using it exit)");
	WRITE_ONCE(m->knobs.hzp_lifetime, v);
	return 0;
}

/* Store every field of k but the lifetime, which the caller has set. */
static void knobs_store_locked(thps_machine *m, const struct knobs *k)
{
	for (size_t i = 0; i < ARRAY_SIZE(knob_defs); i++)
		if (knob_defs[i].offset != offsetof(struct knobs, hzp_lifetime))
			WRITE_ONCE(*knob_field(&m->knobs, &knob_defs[i]),
				   *knob_field((struct knobs *)k, &knob_defs[i]));
	WRITE_ONCE(m->knobs.kernel, k->kernel);
}

static int set_kernel(thps_machine *m, const char *value)
{
	int ver = parse_kernel_version(value), err;
	struct knobs k;

	if (ver < 0)
		return machine_error(m, -EINVAL, "%s: bad version '%s' (%s)", KERNEL_KNOB, value,
				     thps_knob_help(NR_KNOBS - 1));
	if (ver < KERNEL_OLDEST)
		return machine_error(m, -EINVAL, "%s: '%s' is older than Linux 3.8, the first "
				     "with a huge zero page", KERNEL_KNOB, value);
	spin_lock(&m->knob_lock);
	k = m->knobs;
	profile_for_version(&k, ver);
	err = set_lifetime_locked(m, k.hzp_lifetime);
	if (!err)
		knobs_store_locked(m, &k);
	spin_unlock(&m->knob_lock);
	return err;
}

int thps_knob_set(thps_machine *m, const char *name, const char *value)
{
	const struct knob_def *d;
	int v, err = 0;

	if (!strcmp(name, KERNEL_KNOB))
		return set_kernel(m, value);
	d = find_knob(name);
	if (!d)
		return machine_error(m, -ENOENT, "unknown knob '%s'", name);
	if (parse_value(d, value, &v))
		return machine_error(m, -EINVAL, "%s: bad value '%s' (%s)", name, value, d->help);
	spin_lock(&m->knob_lock);
	if (d->offset == offsetof(struct knobs, hzp_lifetime))
		err = set_lifetime_locked(m, v);
	else
		WRITE_ONCE(*knob_field(&m->knobs, d), v);
	spin_unlock(&m->knob_lock);
	return err;
}

int thps_knob_offered(thps_machine *m, const char *name, const char *value, char *why,
		      size_t len)
{
	const struct knob_def *d = find_knob(name), *nd;
	const char *since = "?";
	int v;

	if (!d || !d->needs || parse_value(d, value, &v) || v == d->def)
		return 1;
	nd = find_knob(d->needs);
	if (!nd || READ_ONCE(*knob_field(&m->knobs, nd)))
		return 1;
	/* the first version whose profile has the file */
	for (size_t i = 0; i < ARRAY_SIZE(profile_changes); i++) {
		const struct thps_profile_change *c = &profile_changes[i];

		if (!strcmp(c->knob, d->needs) && strcmp(c->value, "0")) {
			since = c->since;
			break;
		}
	}
	snprintf(why, len, "%s: a kernel before Linux %s (%s=0) has no such file", name, since,
		 d->needs);
	return 0;
}

int thps_knob_get(thps_machine *m, const char *name, char *buf, size_t len)
{
	const struct knob_def *d;
	struct knobs k = knobs_read(m);

	if (!strcmp(name, KERNEL_KNOB)) {
		snprintf(buf, len, "%d.%d", k.kernel / 256, k.kernel % 256);
		return 0;
	}
	d = find_knob(name);
	if (!d)
		return -ENOENT;
	if (d->values)
		snprintf(buf, len, "%s", d->values[*knob_field(&k, d)]);
	else
		snprintf(buf, len, "%d", *knob_field(&k, d));
	return 0;
}
