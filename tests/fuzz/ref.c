/*
 * ref.c - the reference model: per process a flat page map, and Linux's
 * answers to the memory system calls worked out on it.
 *
 * Sources for each decision, in order of authority: the running kernel
 * (Linux 6.18 where this was written; tools/kernel-probe/errno-probe.c prints what
 * it answers to each edge case quoted below), then the kernel's source
 * (do_mmap, __vm_munmap, do_mprotect_pkey, do_madvise, mm/mremap.c's
 * check_mremap_params, check_prep_vma, remap_is_valid, mremap_to,
 * mremap_at and remap_move), then the model's documented divergences
 * (docs/model.md): mprotect and madvise check the whole range before they
 * change anything; only anonymous private mappings exist (-EOPNOTSUPP);
 * only five madvise advices and two mremap flags are modelled (-EINVAL).
 *
 * VMAs.  The reference keeps no VMAs, but mremap must know whether a range
 * lies in one VMA.  Each page carries an id; a mapping operation gives the
 * pages it creates or changes one fresh id per run of pages that had one old
 * id.  A contiguous run of pages with one id was therefore created together
 * and never changed apart, so it lies in one VMA whatever merging did since
 * (pages of one id on both sides of a hole may be in two).  A range is then
 * in one VMA for sure (one id, no hole), surely not (a hole, or flags that
 * differ), or the reference cannot tell (several ids, same flags); in that
 * last case the model may answer either way and the reference follows it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define PROT_BITS 0x7 /* PROT_READ | PROT_WRITE | PROT_EXEC */
#define PROT_SEM 0x8
#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_FIXED 0x10
#define MAP_ANONYMOUS 0x20
#define MAP_GROWSDOWN 0x0100
#define MAP_LOCKED 0x2000
#define MAP_STACK 0x20000
#define MAP_HUGETLB 0x40000
#define MAP_FIXED_NOREPLACE 0x100000
#define MREMAP_MAYMOVE 1
#define MREMAP_FIXED 2

static inline uint64_t page_align(uint64_t x)
{
	return (x + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1);
}

static inline bool page_aligned(uint64_t x)
{
	return !(x & (REF_PAGE_SIZE - 1));
}

static struct ref_page *pg(struct ref *r, int slot, uint64_t addr)
{
	return &r->mm[slot]->page[(addr - REF_BASE) >> REF_PAGE_SHIFT];
}

const struct ref_page *ref_page_at(const struct ref *r, int slot, uint64_t addr)
{
	if (!ref_live(r, slot) || addr < REF_BASE || addr >= REF_TOP)
		return NULL;
	return &r->mm[slot]->page[(addr - REF_BASE) >> REF_PAGE_SHIFT];
}

static bool mapped(const struct ref *r, int slot, uint64_t addr)
{
	const struct ref_page *p = ref_page_at(r, slot, addr);

	return p && (p->flags & RP_MAPPED);
}

/* ---- bytes ---- */
static void data_put(struct ref_data *d)
{
	if (d && --d->refs == 0)
		free(d);
}

/* The page's bytes, its own to change. */
static uint8_t *data_own(struct ref_page *p)
{
	struct ref_data *d = p->data;

	if (d && d->refs == 1)
		return d->b;
	p->data = malloc(sizeof(*p->data));
	if (!p->data)
		abort();
	p->data->refs = 1;
	if (d) {
		memcpy(p->data->b, d->b, REF_PAGE_SIZE);
		d->refs--;
	} else {
		memset(p->data->b, 0, REF_PAGE_SIZE);
	}
	return p->data->b;
}

static void page_clear(struct ref_mm *mm, struct ref_page *p)
{
	if (p->flags & RP_MAPPED)
		mm->nr_mapped--;
	data_put(p->data);
	memset(p, 0, sizeof(*p));
}

/* ---- processes ---- */
void ref_init(struct ref *r)
{
	memset(r, 0, sizeof(*r));
	r->next_id = 1;
}

bool ref_live(const struct ref *r, int slot)
{
	return slot >= 0 && slot < REF_MAX_PROCS && r->mm[slot];
}

int ref_proc_new(struct ref *r, int slot)
{
	if (slot < 0 || slot >= REF_MAX_PROCS || r->mm[slot])
		return -EINVAL;
	r->mm[slot] = calloc(1, sizeof(struct ref_mm));
	return r->mm[slot] ? 0 : -ENOMEM;
}

int ref_fork(struct ref *r, int parent, int child)
{
	struct ref_mm *c;

	if (!ref_live(r, parent) || ref_proc_new(r, child))
		return -EINVAL;
	c = r->mm[child];
	memcpy(c, r->mm[parent], sizeof(*c));
	for (uint64_t i = 0; i < REF_PAGES; i++) {
		if (c->page[i].data)
			c->page[i].data->refs++;
		c->page[i].young = 0; /* copy_present_pte: pte_mkold for the child */
	}
	return 0;
}

void ref_exit(struct ref *r, int slot)
{
	struct ref_mm *mm;

	if (!ref_live(r, slot))
		return;
	mm = r->mm[slot];
	for (uint64_t i = 0; i < REF_PAGES; i++)
		data_put(mm->page[i].data);
	free(mm);
	r->mm[slot] = NULL;
}

void ref_free(struct ref *r)
{
	for (int i = 0; i < REF_MAX_PROCS; i++)
		ref_exit(r, i);
}

/* ---- ranges ---- */

/* Unmap [addr, addr+len): what lies outside the window was never mapped. */
static void unmap_range(struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	uint64_t start = addr < REF_BASE ? REF_BASE : addr;
	uint64_t end = len > REF_TOP - addr ? REF_TOP : addr + len;

	if (addr >= REF_TOP || start >= end)
		return;
	for (uint64_t a = start; a < end; a += REF_PAGE_SIZE)
		page_clear(r->mm[slot], pg(r, slot, a));
}

static bool range_free(const struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len; a += REF_PAGE_SIZE)
		if (mapped(r, slot, a))
			return false;
	return true;
}

static bool range_mapped(const struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len; a += REF_PAGE_SIZE)
		if (!mapped(r, slot, a))
			return false;
	return true;
}

/*
 * Give the pages of [addr, addr+len) new ids: one per run of pages that had
 * one id (a run lay in one VMA and still does after a change that covers it).
 */
static void renumber(struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	uint32_t old = 0, cur = 0;

	for (uint64_t a = addr; a < addr + len; a += REF_PAGE_SIZE) {
		struct ref_page *p = pg(r, slot, a);

		if (a == addr || p->id != old) {
			old = p->id;
			cur = r->next_id++;
		}
		p->id = cur;
	}
}

enum span { SPAN_ONE, SPAN_NOT, SPAN_UNKNOWN };

/* Does [addr, addr+len) lie in one VMA? */
static enum span span_of(const struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	const struct ref_page *first = ref_page_at(r, slot, addr);
	bool one_id = true;

	if (!first || !(first->flags & RP_MAPPED))
		return SPAN_NOT;
	for (uint64_t a = addr; a < addr + len; a += REF_PAGE_SIZE) {
		const struct ref_page *p = ref_page_at(r, slot, a);

		if (!p || !(p->flags & RP_MAPPED) || p->prot != first->prot || p->flags != first->flags)
			return SPAN_NOT;
		if (p->id != first->id)
			one_id = false;
	}
	return one_id ? SPAN_ONE : SPAN_UNKNOWN;
}

/* ---- placement (mirrors the model's unmapped_area_topdown and
 * __thp_get_unmapped_area, which follow Linux 6.7+) ---- */

/* The highest gap below REF_TOP with room for len: its top minus len. */
static uint64_t topdown(const struct ref *r, int slot, uint64_t len)
{
	uint64_t high = REF_TOP;

	for (uint64_t i = REF_PAGES; i-- > 0;) {
		if (!(r->mm[slot]->page[i].flags & RP_MAPPED))
			continue;
		/* page i is mapped: the gap is [its end, high) */
		{
			uint64_t gap_start = REF_BASE + ((i + 1) << REF_PAGE_SHIFT);

			if (high - gap_start >= len && high > gap_start)
				return high - len;
			high = REF_BASE + (i << REF_PAGE_SHIFT);
		}
	}
	/* below the window nothing is mapped, down to mmap_min_addr */
	if (high > REF_MMAP_MIN && high - REF_MMAP_MIN >= len)
		return high - len;
	return 0;
}

uint64_t ref_unmapped_area(const struct ref *r, int slot, uint64_t len, bool thp_align)
{
	if (thp_align) {
		uint64_t ret = topdown(r, slot, len + REF_PMD_SIZE);

		if (ret) {
			uint64_t off_sub = (0 - ret) & (REF_PMD_SIZE - 1);

			return off_sub ? ret + off_sub : ret + REF_PMD_SIZE;
		}
	}
	return topdown(r, slot, len);
}

static struct ref_expect expect(int err)
{
	return (struct ref_expect){ .err = err, .alt = REF_NO_ALT };
}

static struct ref_expect skip(void)
{
	return (struct ref_expect){ .skip = true, .alt = REF_NO_ALT };
}

/* ---- mmap ---- */
struct ref_expect ref_mmap(struct ref *r, int slot, uint64_t addr, uint64_t len, int prot,
			   int flags, enum ref_path path, uint64_t model_addr)
{
	struct ref_expect e = expect(0);
	uint64_t where;

	(void)model_addr;
	/* do_mmap: a zero length is EINVAL, a length that aligns past the
	 * address space ENOMEM (observed: "mmap len 2^63", "mmap len -1") */
	if (!len)
		return expect(-EINVAL);
	if (len > REF_TASK_SIZE)
		return expect(-ENOMEM);
	len = page_align(len);
	/* the model's choice: only anonymous private memory, neither hugetlbfs
	 * nor locked */
	if ((flags & (MAP_SHARED | MAP_PRIVATE)) != MAP_PRIVATE || !(flags & MAP_ANONYMOUS) ||
	    (flags & (MAP_HUGETLB | MAP_LOCKED)))
		return expect(-EOPNOTSUPP);
	/* a stack that grows down on faults below it is not in the reference */
	if (flags & MAP_GROWSDOWN)
		return skip();
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (!page_aligned(addr))
			return expect(-EINVAL);
		if (!ref_in_window(addr, len))
			return skip();
		if ((flags & MAP_FIXED_NOREPLACE) && !range_free(r, slot, addr, len))
			return expect(-EEXIST);
		where = addr;
	} else {
		/* a hint: round_hint_to_min (do_mmap), then x86's
		 * arch_get_unmapped_area_topdown rounds it down and takes it when
		 * the range fits below TASK_SIZE and is free (observed: "mmap hint
		 * unaligned free" maps at the page below, "mmap hint near 2^64"
		 * elsewhere); THP alignment only without one (__get_unmapped_area) */
		uint64_t hint = addr & ~(REF_PAGE_SIZE - 1);
		bool thp_align, fits;

		if (hint && hint < REF_MMAP_MIN)
			hint = REF_MMAP_MIN;
		thp_align = !hint && (r->anon_thp_align == 2 ? !(len & (REF_PMD_SIZE - 1)) :
				      r->anon_thp_align == 1 && len >= REF_PMD_SIZE);
		fits = hint && hint <= REF_TASK_SIZE && len <= REF_TASK_SIZE - hint;
		if (fits && !ref_in_window(hint, len))
			return skip(); /* free, but outside the window */
		if (fits && range_free(r, slot, hint, len))
			where = hint;
		else
			where = ref_unmapped_area(r, slot, len, thp_align);
		if (!where || !ref_in_window(where, len))
			return skip();
	}
	e.addr = where;
	if (path != REF_OK)
		return e;
	unmap_range(r, slot, where, len);
	{
		uint32_t id = r->next_id++;

		for (uint64_t a = where; a < where + len; a += REF_PAGE_SIZE) {
			struct ref_page *p = pg(r, slot, a);

			/* MAP_STACK is VM_NOHUGEPAGE since Linux 6.7 ("mm: mmap: map
			 * MAP_STACK to VM_NOHUGEPAGE"; observed: VmFlags nh) */
			p->flags = RP_MAPPED | ((flags & MAP_STACK) && r->map_stack_nohugepage ?
						RP_NOHUGEPAGE : 0);
			p->prot = (uint8_t)(prot & PROT_BITS);
			p->id = id;
			r->mm[slot]->nr_mapped++;
		}
	}
	return e;
}

/* ---- munmap (__vm_munmap / do_vmi_munmap) ---- */
struct ref_expect ref_munmap(struct ref *r, int slot, uint64_t addr, uint64_t len,
			     enum ref_path path)
{
	if (!page_aligned(addr) || addr > REF_TASK_SIZE || len > REF_TASK_SIZE - addr)
		return expect(-EINVAL);
	len = page_align(len);
	if (!len)
		return expect(-EINVAL);
	if (path == REF_OK)
		unmap_range(r, slot, addr, len);
	return expect(0);
}

/* ---- mprotect (do_mprotect_pkey) ----
 * observed: "mprotect len0 badprot: ok", "mprotect len wraps: ENOMEM",
 * "mprotect PROT_SEM: ok", "mprotect 0x10: EINVAL" */
struct ref_expect ref_mprotect(struct ref *r, int slot, uint64_t addr, uint64_t len, int prot,
			       enum ref_path path)
{
	uint64_t end;

	if (!page_aligned(addr))
		return expect(-EINVAL);
	if (!len)
		return expect(0);
	len = page_align(len);
	end = addr + len;
	if (end <= addr)
		return expect(-ENOMEM);
	if (prot & ~(PROT_BITS | PROT_SEM))
		return expect(-EINVAL);
	/* the model checks the whole range first (documented divergence) */
	if (!range_mapped(r, slot, addr, len))
		return expect(-ENOMEM);
	if (path == REF_OK) {
		for (uint64_t a = addr; a < end; a += REF_PAGE_SIZE)
			pg(r, slot, a)->prot = (uint8_t)(prot & PROT_BITS);
		renumber(r, slot, addr, len);
	}
	return expect(0);
}

/* ---- madvise (do_madvise) ----
 * observed: "madvise len 0 bad advice: EINVAL", "madvise len wraps to 0:
 * EINVAL", "madvise wraps: EINVAL", "madvise end past TASK_SIZE: ENOMEM",
 * "madvise unmapped NORMAL: ENOMEM", "madvise prot-none DONTNEED: ok" */
#define MADV_NORMAL 0
#define MADV_DONTNEED 4
#define MADV_FREE 8
#define MADV_HUGEPAGE 14
#define MADV_NOHUGEPAGE 15
#define MADV_COLLAPSE 25

struct ref_expect ref_madvise(struct ref *r, int slot, uint64_t addr, uint64_t len, int advice,
			      enum ref_path path)
{
	uint64_t alen, end;

	switch (advice) {
	case MADV_NORMAL:
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_HUGEPAGE:
	case MADV_NOHUGEPAGE:
	case MADV_COLLAPSE:
		break;
	default:
		return expect(-EINVAL); /* invalid, or valid in Linux but not modelled */
	}
	if (!page_aligned(addr))
		return expect(-EINVAL);
	alen = page_align(len);
	if (len && !alen)
		return expect(-EINVAL);
	end = addr + alen;
	if (end < addr)
		return expect(-EINVAL);
	if (end == addr)
		return expect(0);
	/*
	 * MADV_COLLAPSE: whether a 2 MiB collapses depends on page tables,
	 * which the reference does not have; it only keeps every byte where it
	 * was.  Linux walks the VMAs (holes: ENOMEM at the end) and stops at
	 * the first error: 0, EINVAL, EAGAIN, ENOMEM (no THP) or ENOMEM (a
	 * hole) are all answers it may give.
	 */
	if (advice == MADV_COLLAPSE) {
		struct ref_expect e = expect(0);

		e.collapse = true;
		return e;
	}
	/* the model checks the whole range first (documented divergence) */
	if (!range_mapped(r, slot, addr, alen))
		return expect(-ENOMEM);
	if (path != REF_OK)
		return expect(0);
	for (uint64_t a = addr; a < end; a += REF_PAGE_SIZE) {
		struct ref_page *p = pg(r, slot, a);

		switch (advice) {
		case MADV_DONTNEED:
			data_put(p->data);
			p->data = NULL;
			p->young = 0;
			break;
		case MADV_FREE: /* madvise_free_pte_range: pte_mkold */
			p->young = 0;
			break;
		case MADV_HUGEPAGE:
			p->flags = (uint8_t)((p->flags & ~RP_NOHUGEPAGE) | RP_HUGEPAGE);
			break;
		case MADV_NOHUGEPAGE:
			p->flags = (uint8_t)((p->flags & ~RP_HUGEPAGE) | RP_NOHUGEPAGE);
			break;
		default: /* MADV_NORMAL; MADV_FREE keeps the bytes in the model */
			break;
		}
	}
	if (advice == MADV_HUGEPAGE || advice == MADV_NOHUGEPAGE)
		renumber(r, slot, addr, alen);
	return expect(0);
}

/* ---- mremap ---- */
static struct ref_expect with_alt(struct ref_expect e, int alt)
{
	if (alt != REF_NO_ALT && e.err != alt)
		e.alt = alt;
	return e;
}

/*
 * Move the pages of [addr, addr+old_len) to new_addr as one new VMA of
 * new_len bytes; the pages past old_len are new, zero, with the flags of
 * the last moved page.
 */
static void move_range(struct ref *r, int slot, uint64_t addr, uint64_t old_len, uint64_t new_addr,
		       uint64_t new_len)
{
	struct ref_mm *mm = r->mm[slot];
	uint64_t n = old_len >> REF_PAGE_SHIFT;
	struct ref_page *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	uint32_t id = r->next_id++;
	uint8_t prot = 0, flags = RP_MAPPED;

	if (!tmp)
		abort();
	for (uint64_t i = 0; i < n; i++) {
		struct ref_page *p = pg(r, slot, addr + (i << REF_PAGE_SHIFT));

		tmp[i] = *p;
		if (p->flags & RP_MAPPED)
			mm->nr_mapped--;
		memset(p, 0, sizeof(*p));
	}
	unmap_range(r, slot, new_addr, new_len);
	for (uint64_t i = 0; i < new_len >> REF_PAGE_SHIFT; i++) {
		struct ref_page *p = pg(r, slot, new_addr + (i << REF_PAGE_SHIFT));

		if (i < n) {
			*p = tmp[i];
			prot = p->prot;
			flags = p->flags;
		} else {
			p->prot = prot;
			p->flags = flags;
		}
		p->id = id;
		mm->nr_mapped++;
	}
	free(tmp);
}

/*
 * remap_move (Linux 6.17+, "mm/mremap: permit mremap() move of multiple
 * VMAs"): MREMAP_FIXED without a change of size moves every VMA of the
 * range, each to new_addr plus its offset, gaps kept; the destination is
 * unmapped only where a VMA lands.  The range must start inside a VMA.
 */
static struct ref_expect remap_move(struct ref *r, int slot, uint64_t addr, uint64_t len,
				    uint64_t new_addr, enum ref_path path)
{
	struct ref_expect e = expect(0);
	uint64_t n = len >> REF_PAGE_SHIFT;
	struct ref_page *tmp;

	if (!mapped(r, slot, addr))
		return expect(-EFAULT);
	if (!ref_in_window(new_addr, len))
		return skip();
	e.addr = new_addr;
	e.enomem_ok = true;
	if (path != REF_OK)
		return e;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		abort();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t a = addr + (i << REF_PAGE_SHIFT);
		struct ref_page *p = (struct ref_page *)ref_page_at(r, slot, a);

		if (p && (p->flags & RP_MAPPED)) {
			tmp[i] = *p;
			r->mm[slot]->nr_mapped--;
			memset(p, 0, sizeof(*p));
		} else {
			memset(&tmp[i], 0, sizeof(tmp[i]));
		}
	}
	/* one new id per run of moved pages that had one id and no gap */
	for (uint64_t i = 0, run = 0; i < n; i++) {
		struct ref_page *p;

		if (!(tmp[i].flags & RP_MAPPED))
			continue;
		if (i == 0 || !(tmp[i - 1].flags & RP_MAPPED) || tmp[i - 1].id != tmp[i].id)
			run = r->next_id++;
		p = pg(r, slot, new_addr + (i << REF_PAGE_SHIFT));
		page_clear(r->mm[slot], p);
		*p = tmp[i];
		p->id = (uint32_t)run;
		r->mm[slot]->nr_mapped++;
	}
	free(tmp);
	return e;
}

struct ref_expect ref_mremap(struct ref *r, int slot, uint64_t addr, uint64_t old_len,
			     uint64_t new_len, int flags, uint64_t new_addr, enum ref_path path)
{
	struct ref_expect e = expect(0);
	bool fixed = flags & MREMAP_FIXED;
	int alt = REF_NO_ALT; /* -EFAULT when the reference cannot tell the VMAs */
	enum span s;

	/* do_mremap aligns both lengths, then check_mremap_params */
	old_len = page_align(old_len);
	new_len = page_align(new_len);
	if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED))
		return expect(-EINVAL); /* MREMAP_DONTUNMAP is not modelled */
	if (!page_aligned(addr))
		return expect(-EINVAL);
	if (!new_len)
		return expect(-EINVAL);
	if (new_len > REF_TASK_SIZE)
		return expect(-EINVAL);
	if (fixed) {
		/* observed: a garbage new_addr without MREMAP_FIXED is ignored */
		if (new_addr > REF_TASK_SIZE - new_len)
			return expect(-EINVAL);
		if (!page_aligned(new_addr))
			return expect(-EINVAL);
		if (!(flags & MREMAP_MAYMOVE))
			return expect(-EINVAL);
		if (addr + old_len > new_addr && new_addr + new_len > addr)
			return expect(-EINVAL);
		if (old_len == new_len)
			return remap_move(r, slot, addr, old_len, new_addr, path);
	}
	/* check_prep_vma */
	if (!mapped(r, slot, addr))
		return expect(-EFAULT);
	if (new_len > old_len || fixed) {
		/* remap_is_valid; a shrink may cross VMA ends (only new_len must fit) */
		if (!old_len)
			return expect(-EINVAL);
		s = span_of(r, slot, addr, new_len < old_len ? new_len : old_len);
		if (s == SPAN_NOT)
			return expect(-EFAULT);
		if (s == SPAN_UNKNOWN) {
			alt = -EFAULT;
			if (path == REF_ALT)
				return expect(-EFAULT);
		}
	}
	if (fixed) {
		/* mremap_to: unmap the destination, shrink, then move */
		struct ref_expect u = expect(0);

		if (!ref_in_window(new_addr, new_len))
			return with_alt(skip(), alt);
		/* the shrink is munmap's, with its checks, after the destination
		 * is gone: an absurd old_len fails there */
		if (new_len < old_len)
			u = ref_munmap(r, slot, addr + new_len, old_len - new_len, REF_DECIDE);
		e.addr = new_addr;
		e.enomem_ok = !u.err;
		e.err = u.err;
		if (path != REF_OK)
			return with_alt(e, alt);
		unmap_range(r, slot, new_addr, new_len);
		if (u.err)
			return with_alt(e, alt);
		if (new_len < old_len) {
			unmap_range(r, slot, addr + new_len, old_len - new_len);
			old_len = new_len;
		}
		move_range(r, slot, addr, old_len, new_addr, new_len);
		return with_alt(e, alt);
	}
	e.addr = addr;
	if (new_len == old_len)
		return with_alt(e, alt);
	if (new_len < old_len) {
		/* shrink_vma: munmap's own checks on the tail */
		struct ref_expect u = ref_munmap(r, slot, addr + new_len, old_len - new_len, path);

		u.addr = addr;
		return with_alt(u, alt);
	}
	/* expand_vma: in place when the VMA ends with the range and room follows */
	if (ref_in_window(addr + old_len, new_len - old_len) &&
	    range_free(r, slot, addr + old_len, new_len - old_len)) {
		if (path == REF_OK) {
			struct ref_page *last = pg(r, slot, addr + old_len - REF_PAGE_SIZE);
			/* a fresh id: the new pages may join pages of the next VMA
			 * with the last one's id, and need not merge with them */
			uint32_t id = r->next_id++;

			for (uint64_t a = addr + old_len; a < addr + new_len; a += REF_PAGE_SIZE) {
				struct ref_page *p = pg(r, slot, a);

				p->flags = last->flags;
				p->prot = last->prot;
				p->id = id;
				r->mm[slot]->nr_mapped++;
			}
		}
		return with_alt(e, alt);
	}
	if (!ref_in_window(addr + old_len, new_len - old_len))
		return with_alt(skip(), alt);
	if (!(flags & MREMAP_MAYMOVE))
		return with_alt(expect(-ENOMEM), alt);
	e.addr = ref_unmapped_area(r, slot, new_len, !(new_len & (REF_PMD_SIZE - 1)));
	if (!e.addr || !ref_in_window(e.addr, new_len))
		return with_alt(skip(), alt);
	e.enomem_ok = true;
	if (path == REF_OK)
		move_range(r, slot, addr, old_len, e.addr, new_len);
	return with_alt(e, alt);
}

/* ---- accesses ---- */
uint64_t ref_access_ok(const struct ref *r, int slot, uint64_t addr, uint64_t len, bool write)
{
	uint64_t a = addr;

	if (!len)
		return 0;
	if (addr + len < addr)
		return 0;
	while (a < addr + len) {
		const struct ref_page *p = ref_page_at(r, slot, a);

		if (!p || !(p->flags & RP_MAPPED) || (write ? !(p->prot & 2) : !p->prot))
			return a - addr;
		a = (a & ~(REF_PAGE_SIZE - 1)) + REF_PAGE_SIZE;
	}
	return len;
}

uint8_t ref_byte(const struct ref *r, int slot, uint64_t addr)
{
	const struct ref_page *p = ref_page_at(r, slot, addr);

	return p && p->data ? p->data->b[addr & (REF_PAGE_SIZE - 1)] : 0;
}

void ref_read(const struct ref *r, int slot, uint64_t addr, void *buf, size_t len)
{
	uint8_t *b = buf;

	while (len) {
		uint64_t off = addr & (REF_PAGE_SIZE - 1), chunk = REF_PAGE_SIZE - off;
		const struct ref_page *p = ref_page_at(r, slot, addr);

		if (chunk > len)
			chunk = len;
		if (p && p->data)
			memcpy(b, p->data->b + off, chunk);
		else
			memset(b, 0, chunk);
		addr += chunk;
		b += chunk;
		len -= chunk;
	}
}

void ref_write(struct ref *r, int slot, uint64_t addr, const void *buf, size_t len)
{
	const uint8_t *b = buf;

	while (len) {
		uint64_t off = addr & (REF_PAGE_SIZE - 1), chunk = REF_PAGE_SIZE - off;

		if (chunk > len)
			chunk = len;
		memcpy(data_own(pg(r, slot, addr)) + off, b, chunk);
		addr += chunk;
		b += chunk;
		len -= chunk;
	}
}

/* ---- the accessed bit ---- */
void ref_mark_young(struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr & ~(REF_PAGE_SIZE - 1); len && a < addr + len; a += REF_PAGE_SIZE)
		if (ref_page_at(r, slot, a))
			pg(r, slot, a)->young = 1;
}

void ref_make_old(struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	for (uint64_t a = addr; a < addr + len; a += REF_PAGE_SIZE)
		if (ref_page_at(r, slot, a))
			pg(r, slot, a)->young = 0;
}

/* ---- following the model after -ENOMEM ---- */
uint32_t ref_new_id(struct ref *r)
{
	return r->next_id++;
}

void ref_unmap_page(struct ref *r, int slot, uint64_t addr)
{
	if (ref_page_at(r, slot, addr))
		page_clear(r->mm[slot], pg(r, slot, addr));
}

void ref_move_page(struct ref *r, int slot, uint64_t from, uint64_t to, uint32_t id)
{
	struct ref_page *s = pg(r, slot, from), *t = pg(r, slot, to);

	page_clear(r->mm[slot], t);
	*t = *s;
	t->id = id;
	memset(s, 0, sizeof(*s));
}
