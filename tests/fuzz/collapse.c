/*
 * collapse.c - the reference's answers to MADV_COLLAPSE and to khugepaged,
 * and the differential check of what the model did.
 *
 * Whether a 2 MiB range collapses depends on its page-table entries, which
 * the reference (ref.c) does not keep.  So, as a test on a real kernel would
 * read /proc/PID/pagemap and kpageflags, this reads the entries the model
 * shows before the operation (thps_pageinfo: present, writable, the zero
 * page, a huge PMD, a page of a THP, the mapcount) and the VMAs (already
 * checked against the reference's pages), decides from them what Linux does,
 * and checks the model's answer, each range's state after, and the counters.
 * The rules are written from Linux's mm/khugepaged.c and mm/madvise.c, not
 * from src/mm/khugepaged.c:
 *
 *  - hpage_collapse_scan_pmd: a huge PMD (a THP, the huge zero page) is
 *    SCAN_PMD_MAPPED, a success that changes nothing; none and zero-page
 *    entries count together against khugepaged/max_ptes_none, pages mapped
 *    by another process against max_ptes_shared (khugepaged only, both);
 *    before Linux 6.18 a range with no writable entry is SCAN_PAGE_RO
 *    (thpsim/collapse_ro=0); khugepaged wants one referenced entry
 *    (SCAN_LACK_REFERENCED_PAGE), MADV_COLLAPSE does not.
 *  - madvise_collapse: thp_vma_allowable_order without the sysfs settings
 *    (VM_NOHUGEPAGE and a VMA with no aligned 2 MiB inside it: EINVAL); the
 *    aligned ranges of [start, end) inside the VMA in order, going on past
 *    SCAN_PAGE_RO and stopping at an allocation failure (ENOMEM); 0 when
 *    every range ended PMD-mapped, else madvise_collapse_errno of the last
 *    failure; an inverted range (start and end inside one 2 MiB) is EINVAL.
 *  - madvise_walk_vmas: the VMAs in order, a hole remembered as ENOMEM and
 *    returned at the end, a VMA's error returned at once (the VMAs after it
 *    are left alone), no VMA at all past start: ENOMEM.
 *  - khugepaged_scan_mm_slot: every registered mm, each VMA that
 *    thp_vma_allowable_order allows with the sysfs settings (enabled=always,
 *    or madvise and VM_HUGEPAGE; not VM_NOHUGEPAGE), each aligned 2 MiB in it.
 *    An mm is registered (khugepaged_enter_vma) at MADV_HUGEPAGE of a VMA
 *    with an aligned 2 MiB while THP is not "never", and at fork if its
 *    parent was (khugepaged_fork); other ways (mmap or a THP fault under
 *    always) the reference does not follow, so for such an mm it accepts
 *    "every range it must collapse collapsed" or "nothing changed".
 *
 * Where the reference cannot know the answer it accepts each of Linux's:
 * a range with no page at all (whether a PTE table is there decides:
 * SCAN_PMD_NULL goes on in 6.1, SCAN_PMD_NONE stops since; 6.18 may collapse
 * a table of none entries), a range none of whose entries it knows young
 * (a huge PMD's accessed bit covers 512 pages, and zap_pte_range marks a
 * folio referenced for the other mms that map it), pages of a PTE-mapped THP
 * against max_ptes_shared (folio_likely_mapped_shared), and a range over the
 * shared limit that another mm's collapse may unshare.  An allocation that
 * failed (thp_collapse_alloc_failed) excuses a range that must collapse; a
 * split during the operation (the allocation's reclaim runs the shrinkers)
 * excuses the per-range states.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"

#define PMD_PAGES (REF_PMD_SIZE >> REF_PAGE_SHIFT)
#define MAX_RANGES (REF_SIZE / REF_PMD_SIZE)

/* What a range must do. */
enum outcome {
	O_NOP,     /* already PMD-mapped: stays so, counted a success */
	O_MUST,    /* collapses (or its allocation fails) */
	O_FAIL,    /* left alone, and the call goes on (EINVAL) */
	O_MAYBE,   /* either, and after a failure the call may stop or go on */
};

struct range_state {
	bool huge;   /* mapped by a PMD */
	int nr_none; /* none or zero-page entries */
	int nr_pages, nr_shared, nr_ptethp;
	bool writable, young;
};

static void range_state(struct diff *d, int slot, uint64_t a, struct range_state *rs)
{
	struct thps_pageinfo pi;

	memset(rs, 0, sizeof(*rs));
	if (thps_pageinfo(d->proc[slot], a, &pi) == 0 && pi.present && pi.huge) {
		rs->huge = true;
		return;
	}
	for (uint64_t i = 0; i < PMD_PAGES; i++) {
		uint64_t x = a + (i << REF_PAGE_SHIFT);
		const struct ref_page *rp = ref_page_at(&d->ref, slot, x);

		if (thps_pageinfo(d->proc[slot], x, &pi) || !pi.present || pi.zero_page) {
			rs->nr_none++;
			continue;
		}
		rs->nr_pages++;
		if (pi.writable)
			rs->writable = true;
		if (pi.thp)
			rs->nr_ptethp++;
		else if (pi.mapcount > 1)
			rs->nr_shared++;
		if (rp && rp->young)
			rs->young = true;
	}
}

static bool now_huge(struct diff *d, int slot, uint64_t a)
{
	struct thps_pageinfo pi;

	return thps_pageinfo(d->proc[slot], a, &pi) == 0 && pi.present && pi.huge;
}

static long knob_long(struct diff *d, const char *name, long dflt)
{
	char buf[32];

	if (thps_knob_get(d->m, name, buf, sizeof(buf)))
		return dflt;
	return strtol(buf, NULL, 10);
}

static const char *knob_str(struct diff *d, const char *name, char *buf, size_t len)
{
	if (thps_knob_get(d->m, name, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* ---- the VMAs, as the model shows them ---- */
struct vmas {
	struct {
		uint64_t start, end;
		bool nohuge, huge;
	} v[REF_PAGES / 2 + 1];
	size_t n;
};

static void vma_add(void *arg, uint64_t start, uint64_t end, int prot, const char *flags)
{
	struct vmas *l = arg;

	(void)prot;
	if (l->n >= sizeof(l->v) / sizeof(l->v[0]))
		return;
	l->v[l->n].start = start;
	l->v[l->n].end = end;
	l->v[l->n].huge = strstr(flags, " hg") != NULL;
	l->v[l->n].nohuge = strstr(flags, " nh") != NULL;
	l->n++;
}

static struct vmas *vmas_of(struct diff *d, int slot)
{
	struct vmas *l = calloc(1, sizeof(*l));

	if (!l)
		abort();
	thps_for_each_vma(d->proc[slot], vma_add, l);
	return l;
}

static uint64_t pmd_up(uint64_t x)
{
	return (x + REF_PMD_SIZE - 1) & ~(REF_PMD_SIZE - 1);
}

static uint64_t pmd_down(uint64_t x)
{
	return x & ~(REF_PMD_SIZE - 1);
}

/* thp_vma_suitable_order for the PMD order somewhere in the VMA */
static bool holds_pmd(uint64_t start, uint64_t end)
{
	return pmd_up(start) + REF_PMD_SIZE <= end && pmd_up(start) >= start;
}

static void vmstat(struct diff *d, uint64_t v[THPS_NR_VM_ITEMS])
{
	thps_vmstat(d->m, v);
}

static bool split_during(const uint64_t *b, const uint64_t *a)
{
	return a[THPS_VM_thp_split_page] != b[THPS_VM_thp_split_page] ||
	       a[THPS_VM_thp_split_pmd] != b[THPS_VM_thp_split_pmd] ||
	       a[THPS_VM_thp_underused_split_page] != b[THPS_VM_thp_underused_split_page];
}

/* ---- MADV_COLLAPSE ---- */
struct walk_range {
	uint64_t addr;
	size_t vma; /* index of the VMA visit it belongs to */
	enum outcome o;
};

static enum outcome madvise_outcome(const struct range_state *rs, bool collapse_ro)
{
	if (rs->huge)
		return O_NOP;
	if (!rs->nr_pages)
		return O_MAYBE;
	if (!rs->writable && !collapse_ro)
		return O_FAIL; /* SCAN_PAGE_RO */
	return O_MUST;
}

int collapse_madvise(struct diff *d, const struct op *op, int slot, char *why, size_t whylen)
{
	uint64_t start = op->addr, end = op->addr + ((op->len + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1));
	bool collapse_ro = knob_long(d, "thpsim/collapse_ro", 0) != 0;
	struct vmas *l = vmas_of(d, slot);
	struct walk_range *r = calloc(MAX_RANGES + 1, sizeof(*r));
	/* each VMA visited: its piece, and whether madvise_collapse refuses it first */
	struct {
		uint64_t s, t;
		int early; /* 0, or the errno it fails with before any range */
		size_t first, nr;
	} *vis = calloc(l->n + 1, sizeof(*vis));
	size_t nvis = 0, nr = 0, i = 0;
	int hole = 0, got, want = 0, ret = 0;
	uint64_t before[THPS_NR_VM_ITEMS], after[THPS_NR_VM_ITEMS];
	uint64_t newly = 0, maybe_left = 0;
	char line[256];

	if (!r || !vis)
		abort();
	op_format(op, line, sizeof(line));
	/* madvise_walk_vmas over the model's VMAs */
	while (i < l->n && l->v[i].end <= start)
		i++;
	if (i == l->n) {
		hole = -ENOMEM; /* find_vma: nothing at or after start */
		nvis = 0;
	}
	for (uint64_t s = start; i < l->n && s < end; i++) {
		uint64_t t;

		if (s < l->v[i].start) {
			hole = -ENOMEM;
			s = l->v[i].start;
			if (s >= end)
				break;
		}
		t = l->v[i].end < end ? l->v[i].end : end;
		vis[nvis].s = s;
		vis[nvis].t = t;
		vis[nvis].first = nr;
		if (l->v[i].nohuge || !holds_pmd(l->v[i].start, l->v[i].end))
			vis[nvis].early = -EINVAL; /* thp_vma_allowable_order */
		else if (pmd_down(t) < pmd_up(s))
			vis[nvis].early = -EINVAL; /* hstart > hend: no whole range, SCAN_FAIL */
		else
			for (uint64_t a = pmd_up(s); a < pmd_down(t); a += REF_PMD_SIZE) {
				struct range_state rs;

				range_state(d, slot, a, &rs);
				r[nr].addr = a;
				r[nr].vma = nvis;
				r[nr].o = madvise_outcome(&rs, collapse_ro);
				nr++;
			}
		vis[nvis].nr = nr - vis[nvis].first;
		nvis++;
		s = t;
		if (i + 1 == l->n && s < end)
			hole = -ENOMEM; /* no VMA after: find_vma returns NULL */
	}
	vmstat(d, before);
	got = thps_madvise(d->proc[slot], op->addr, op->len, op->prot);
	vmstat(d, after);
	if (split_during(before, after)) {
		/* a shrinker split something under the allocation: the states read
		 * before may be stale; any of MADV_COLLAPSE's answers goes */
		if (got && got != -EINVAL && got != -ENOMEM && got != -EAGAIN && got != -EBUSY) {
			snprintf(why, whylen, "%s: model %s, not an answer of MADV_COLLAPSE", line,
				 diff_errname(got));
			ret = -1;
		}
		goto out;
	}
	{
		bool alloc_failed = after[THPS_VM_thp_collapse_alloc_failed] !=
				    before[THPS_VM_thp_collapse_alloc_failed];
		bool stopped = false; /* the call has returned: nothing after changes */

		for (size_t v = 0; v < nvis; v++) {
			enum { GOING, EITHER, HALTED } mode = GOING;
			int last_fail = 0;
			size_t done = 0;

			if (stopped) {
				for (size_t k = vis[v].first; k < vis[v].first + vis[v].nr; k++)
					if (r[k].o != O_NOP && now_huge(d, slot, r[k].addr)) {
						snprintf(why, whylen, "%s: %#" PRIx64 " collapsed after the call "
							 "should have returned %s", line, r[k].addr,
							 diff_errname(want));
						ret = -1;
						goto out;
					}
				continue;
			}
			if (vis[v].early) {
				want = vis[v].early;
				stopped = true;
				continue;
			}
			for (size_t k = vis[v].first; k < vis[v].first + vis[v].nr; k++) {
				bool h = now_huge(d, slot, r[k].addr);
				const char *bad = NULL;

				if (r[k].o == O_NOP) {
					if (!h)
						bad = "was PMD-mapped and is not";
					done++;
				} else if (mode == HALTED) {
					if (h)
						bad = "collapsed after the range that stopped the call";
				} else if (h) {
					if (r[k].o == O_FAIL)
						bad = "collapsed, but Linux refuses it (no writable entry: "
						      "SCAN_PAGE_RO)";
					done++;
					newly++;
				} else if (r[k].o == O_MUST) {
					if (alloc_failed) {
						last_fail = -ENOMEM; /* SCAN_ALLOC_HUGE_PAGE_FAIL ends it */
						mode = HALTED;
					} else if (mode == EITHER) {
						mode = HALTED; /* the uncertain range had stopped it */
					} else {
						bad = "must collapse (pages, a writable entry) and did not";
					}
				} else if (r[k].o == O_FAIL) {
					last_fail = -EINVAL;
				} else { /* O_MAYBE, left alone */
					last_fail = -EINVAL;
					maybe_left++;
					if (mode == GOING)
						mode = EITHER;
				}
				if (bad) {
					snprintf(why, whylen, "%s: range %#" PRIx64 " %s", line, r[k].addr, bad);
					ret = -1;
					goto out;
				}
			}
			if (done != vis[v].nr) {
				want = last_fail ? last_fail : -EINVAL;
				stopped = true;
			}
		}
		if (!stopped)
			want = hole;
		if (got != want && !(alloc_failed && got == -ENOMEM)) {
			snprintf(why, whylen, "%s: model %s, reference %s", line, diff_errname(got),
				 diff_errname(want));
			ret = -1;
			goto out;
		}
		/* a range of none and zero-page entries may be allocated for and
		 * then refused (__collapse_huge_page_isolate) */
		if (after[THPS_VM_thp_collapse_alloc] - before[THPS_VM_thp_collapse_alloc] < newly ||
		    after[THPS_VM_thp_collapse_alloc] - before[THPS_VM_thp_collapse_alloc] >
			    newly + maybe_left) {
			snprintf(why, whylen, "%s: thp_collapse_alloc grew by %" PRIu64 ", %" PRIu64
				 " ranges collapsed", line,
				 after[THPS_VM_thp_collapse_alloc] - before[THPS_VM_thp_collapse_alloc], newly);
			ret = -1;
			goto out;
		}
	}
out:
	/* collapse_huge_page maps a PMD that is not young */
	for (size_t k = 0; k < nr; k++)
		if (r[k].o != O_NOP && now_huge(d, slot, r[k].addr))
			ref_make_old(&d->ref, slot, r[k].addr, REF_PMD_SIZE);
	free(vis);
	free(r);
	free(l);
	return ret;
}

/* ---- khugepaged ---- */

/* transparent_hugepage/enabled for the PMD size: 0 never, 1 madvise, 2
 * always, -1 when the global and per-size settings disagree (kernels
 * differ on which wins: the reference leaves the VMA's fate open). */
static int pmd_mode(struct diff *d)
{
	char top[32], per[32];
	int t, p;

	knob_str(d, "transparent_hugepage/enabled", top, sizeof(top));
	knob_str(d, "transparent_hugepage/hugepages-2048kB/enabled", per, sizeof(per));
	t = !strcmp(top, "always") ? 2 : !strcmp(top, "madvise") ? 1 : 0;
	if (!strcmp(per, "inherit") || !strcmp(per, "?"))
		return t;
	p = !strcmp(per, "always") ? 2 : !strcmp(per, "madvise") ? 1 : 0;
	return p == t ? t : -1;
}

void collapse_note_madvise(struct diff *d, const struct op *op, int slot, int got)
{
	int mode = pmd_mode(d);
	struct vmas *l;

	if (got || op->prot != 14 /* MADV_HUGEPAGE */ || !op->len || mode <= 0)
		return;
	/* khugepaged_enter_vma: the VMA (before madvise split it, so at least
	 * this one) holds an aligned 2 MiB */
	l = vmas_of(d, slot);
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].start <= op->addr && op->addr < l->v[i].end &&
		    holds_pmd(l->v[i].start, l->v[i].end))
			d->khugepaged_mm[slot] = 1;
	free(l);
}

struct khp_range {
	uint64_t addr;
	int slot;
	enum outcome o;
};

int collapse_khugepaged(struct diff *d, const struct op *op, char *why, size_t whylen)
{
	int mode = pmd_mode(d);
	long max_none = knob_long(d, "transparent_hugepage/khugepaged/max_ptes_none", 511);
	long max_shared = knob_long(d, "transparent_hugepage/khugepaged/max_ptes_shared", 256);
	bool collapse_ro = knob_long(d, "thpsim/collapse_ro", 0) != 0;
	size_t cap = 64, n = 0;
	struct khp_range *r = malloc(cap * sizeof(*r));
	uint64_t before[THPS_NR_VM_ITEMS], after[THPS_NR_VM_ITEMS], newly = 0;
	struct thps_khugepaged_stats s0, s1;
	bool any_sure = false, changed[REF_MAX_PROCS] = { false };
	int ret = 0;
	char line[64];

	if (!r)
		abort();
	op_format(op, line, sizeof(line));
	for (int slot = d->cfg.first_slot; slot < d->cfg.first_slot + d->cfg.nr_slots; slot++) {
		struct vmas *l;

		if (!d->proc[slot])
			continue;
		any_sure |= d->khugepaged_mm[slot] != 0;
		l = vmas_of(d, slot);
		for (size_t i = 0; i < l->n; i++) {
			/* hugepage_vma_check / thp_vma_allowable_order with the sysfs settings */
			int elig = l->v[i].nohuge || !holds_pmd(l->v[i].start, l->v[i].end) ? 0
				   : mode < 0 ? -1 : mode == 2 || (mode == 1 && l->v[i].huge);

			for (uint64_t a = pmd_up(l->v[i].start); a + REF_PMD_SIZE <= l->v[i].end;
			     a += REF_PMD_SIZE) {
				struct range_state rs;
				enum outcome o;
				bool any = false;

				/* a range the reference has no page in holds none */
				for (uint64_t x = a; x < a + REF_PMD_SIZE && !any; x += REF_PAGE_SIZE) {
					const struct ref_page *p = ref_page_at(&d->ref, slot, x);

					any = p && (p->flags & RP_MAPPED);
				}
				if (!any)
					continue;
				range_state(d, slot, a, &rs);
				if (rs.huge)
					o = O_NOP;
				else if (!elig || rs.nr_none > max_none || !rs.nr_pages)
					o = O_FAIL; /* SCAN_EXCEED_NONE_PTE */
				else if (!rs.writable && !collapse_ro)
					o = O_FAIL; /* SCAN_PAGE_RO */
				else if (rs.nr_ptethp || rs.nr_shared > max_shared || !rs.young || elig < 0)
					o = O_MAYBE;
				else
					o = O_MUST;
				if (n == cap) {
					cap *= 2;
					r = realloc(r, cap * sizeof(*r));
					if (!r)
						abort();
				}
				r[n++] = (struct khp_range){ a, slot, o };
			}
		}
		free(l);
	}
	vmstat(d, before);
	thps_khugepaged_stats(d->m, &s0);
	thps_khugepaged_run(d->m, 0, op->seed);
	thps_khugepaged_stats(d->m, &s1);
	vmstat(d, after);
	if (split_during(before, after))
		goto update;
	{
		bool alloc_failed = after[THPS_VM_thp_collapse_alloc_failed] !=
				    before[THPS_VM_thp_collapse_alloc_failed];
		const char *bad = NULL;
		size_t k;

		for (k = 0; k < n && !bad; k++) {
			bool h = now_huge(d, r[k].slot, r[k].addr);

			if (r[k].o == O_NOP && !h)
				bad = "was PMD-mapped and is not";
			else if (r[k].o == O_FAIL && h)
				bad = "collapsed, but khugepaged may not (ineligible VMA, max_ptes_none, "
				      "or no writable entry)";
			if (r[k].o != O_NOP && h) {
				newly++;
				changed[r[k].slot] = true;
			}
		}
		/* a range that must collapse did, in an mm khugepaged scanned: one
		 * it surely registered, or one where something collapsed; and only
		 * after a whole pass (the first full_scans may end a pass that began
		 * before this run, past this mm) */
		for (size_t j = 0; j < n && !bad; j++)
			if (r[j].o == O_MUST && !alloc_failed && mode > 0 &&
			    s1.full_scans - s0.full_scans >= 2 &&
			    (d->khugepaged_mm[r[j].slot] || changed[r[j].slot]) &&
			    !now_huge(d, r[j].slot, r[j].addr)) {
				k = j + 1;
				bad = "must collapse (max_ptes_none, max_ptes_shared, a young and a "
				      "writable entry all allow it) and did not";
			}
		if (bad) {
			snprintf(why, whylen, "%s: p%d range %#" PRIx64 " %s", line, r[k - 1].slot,
				 r[k - 1].addr, bad);
			ret = -1;
			goto update;
		}
		if (after[THPS_VM_thp_collapse_alloc] - before[THPS_VM_thp_collapse_alloc] != newly ||
		    s1.pages_collapsed - s0.pages_collapsed != newly) {
			snprintf(why, whylen, "%s: %" PRIu64 " ranges collapsed, thp_collapse_alloc +%" PRIu64
				 ", khugepaged/pages_collapsed +%" PRIu64, line, newly,
				 after[THPS_VM_thp_collapse_alloc] - before[THPS_VM_thp_collapse_alloc],
				 s1.pages_collapsed - s0.pages_collapsed);
			ret = -1;
			goto update;
		}
		/* full_scans: N passes when an mm is registered, or one more (a
		 * wake-up goes on until it passes the head of the list a second
		 * time, khugepaged_do_scan); none with no mm (khugepaged_has_work).
		 * (Under "never" Linux stops the thread, start_stop_khugepaged:
		 * either is accepted there.) */
		uint64_t fs = s1.full_scans - s0.full_scans;

		if ((fs < op->seed || fs > op->seed + 1) && (any_sure && mode > 0 ? true : fs != 0)) {
			snprintf(why, whylen, "%s: khugepaged/full_scans grew by %" PRIu64, line,
				 s1.full_scans - s0.full_scans);
			ret = -1;
		}
	}
update:
	for (size_t k = 0; k < n; k++)
		if (r[k].o != O_NOP && now_huge(d, r[k].slot, r[k].addr)) {
			ref_make_old(&d->ref, r[k].slot, r[k].addr, REF_PMD_SIZE);
			d->khugepaged_mm[r[k].slot] = 1;
		}
	free(r);
	return ret;
}
