/*
 * diff.c - the differential executor: each operation on libthpsim and on
 * the reference model (ref.c), compared; see diff.h for what is compared
 * and when.
 *
 * When the model answers -ENOMEM where the reference says it may (a fault,
 * fork, an mremap that moves page tables), the reference follows what the
 * model did, but only among the outcomes Linux allows:
 *   read, fork        nothing changed
 *   write             a prefix of whole page-sized chunks was written (each
 *                     chunk read back is the new bytes or the old, and no new
 *                     chunk follows an old one)
 *   touch             exactly the bytes before t.done were written
 *   mremap            without MREMAP_FIXED nothing changed; with it, the
 *                     destination may be unmapped and the source shrunk, and
 *                     some source pages moved to their destination with their
 *                     protection and bytes: every page the model maps in the
 *                     two ranges is explained by one of these
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "diff.h"

#define MAX_ACCESS DIFF_MAX_ACCESS
#define ISOLATION_BYTES DIFF_ISOLATION_BYTES

void diff_sync_ref_knobs(struct diff *d)
{
	char v[32] = "";

	d->ref.map_stack_nohugepage = !thps_knob_get(d->m, "thpsim/map_stack_nohugepage", v,
						     sizeof(v)) && !strcmp(v, "1");
	thps_knob_get(d->m, "thpsim/anon_thp_align", v, sizeof(v));
	d->ref.anon_thp_align = !strcmp(v, "pmd-multiple") ? 2 : !strcmp(v, "pmd-or-larger");
}

const char *diff_errname(int err)
{
	static __thread char buf[16];

	switch (err) {
	case 0: return "0";
	case -EINVAL: return "-EINVAL";
	case -ENOMEM: return "-ENOMEM";
	case -EFAULT: return "-EFAULT";
	case -EEXIST: return "-EEXIST";
	case -EOPNOTSUPP: return "-EOPNOTSUPP";
	case -EBUSY: return "-EBUSY";
	case -EPERM: return "-EPERM";
	case -EUCLEAN: return "-EUCLEAN";
	default:
		snprintf(buf, sizeof(buf), "%d", err);
		return buf;
	}
}

static int fail(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct diff *d, const char *fmt, ...)
{
	va_list ap;

	if (d->failed) /* keep the first reason */
		return -1;
	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	d->failed = true;
	d->failed_at = d->nops;
	return -1;
}

uint64_t diff_hash(const uint8_t *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static void note(struct diff *d, uint64_t v)
{
	d->transcript = (d->transcript ^ v) * 0x9E3779B97F4A7C15ULL;
	d->transcript ^= d->transcript >> 29;
}

static int grow(struct diff *d, size_t len)
{
	if (len <= d->buflen)
		return 0;
	free(d->buf);
	free(d->rbuf);
	d->buf = malloc(len);
	d->rbuf = malloc(len);
	d->buflen = d->buf && d->rbuf ? len : 0;
	return d->buflen ? 0 : -1;
}

/* ---- the VMA layout ---- */
struct vma_rec {
	uint64_t start, end;
	int prot;
	uint8_t flags; /* RP_HUGEPAGE | RP_NOHUGEPAGE */
};
struct layout {
	struct vma_rec *v;
	size_t n, cap;
};

static void layout_add(void *arg, uint64_t start, uint64_t end, int prot, const char *flags)
{
	struct layout *l = arg;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 32;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			abort();
	}
	l->v[l->n++] = (struct vma_rec){ start, end, prot,
					 (uint8_t)((strstr(flags, " hg") ? RP_HUGEPAGE : 0) |
						   (strstr(flags, " nh") ? RP_NOHUGEPAGE : 0)) };
}

/* The model's VMA containing addr, or NULL. */
static const struct vma_rec *layout_find(const struct layout *l, uint64_t addr)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->v[mid].end <= addr)
			lo = mid + 1;
		else if (l->v[mid].start > addr)
			hi = mid;
		else
			return &l->v[mid];
	}
	return NULL;
}

static int compare_layout(struct diff *d, int slot)
{
	struct layout l = { 0 };
	uint64_t pages = 0, fig[THPS_NR_PROC_ITEMS];
	int ret = 0;

	thps_for_each_vma(d->proc[slot], layout_add, &l);
	for (size_t i = 0; i < l.n && !ret; i++) {
		const struct vma_rec *v = &l.v[i];

		if (!ref_in_window(v->start, v->end - v->start)) {
			ret = fail(d, "p%d: VMA %#" PRIx64 "-%#" PRIx64 " outside the window the "
				   "operations use", slot, v->start, v->end);
			break;
		}
		for (uint64_t a = v->start; a < v->end; a += REF_PAGE_SIZE) {
			const struct ref_page *p = ref_page_at(&d->ref, slot, a);

			if (!(p->flags & RP_MAPPED) || p->prot != v->prot ||
			    (p->flags & (RP_HUGEPAGE | RP_NOHUGEPAGE)) != v->flags) {
				ret = fail(d, "p%d: page %#" PRIx64 " in VMA %#" PRIx64 "-%#" PRIx64
					   " prot %d flags %d; reference: %s prot %d flags %d",
					   slot, a, v->start, v->end, v->prot, v->flags,
					   (p->flags & RP_MAPPED) ? "mapped" : "not mapped", p->prot,
					   p->flags & (RP_HUGEPAGE | RP_NOHUGEPAGE));
				break;
			}
			pages++;
		}
		/* pages created together and never changed apart are in one VMA */
		if (!ret && i + 1 < l.n && l.v[i + 1].start == v->end) {
			const struct ref_page *a = ref_page_at(&d->ref, slot, v->end - REF_PAGE_SIZE);
			const struct ref_page *b = ref_page_at(&d->ref, slot, v->end);

			if (a->id == b->id)
				ret = fail(d, "p%d: a VMA boundary at %#" PRIx64 " splits pages that "
					   "were mapped and changed together", slot, v->end);
		}
	}
	if (!ret && pages != d->ref.mm[slot]->nr_mapped)
		ret = fail(d, "p%d: the model maps %" PRIu64 " pages, the reference %" PRIu64, slot,
			   pages, d->ref.mm[slot]->nr_mapped);
	if (!ret && thps_proc_figures(d->proc[slot], fig) == 0) {
		if (fig[THPS_PROC_VmSize] != pages * (REF_PAGE_SIZE >> 10))
			ret = fail(d, "p%d: VmSize %" PRIu64 " kB for %" PRIu64 " mapped pages", slot,
				   fig[THPS_PROC_VmSize], pages);
		else if (fig[THPS_PROC_Rss] > fig[THPS_PROC_VmSize])
			ret = fail(d, "p%d: Rss %" PRIu64 " kB above VmSize %" PRIu64 " kB", slot,
				   fig[THPS_PROC_Rss], fig[THPS_PROC_VmSize]);
	}
	free(l.v);
	return ret;
}

/* Read [addr, addr+len) of a process from the model and compare with the
 * reference: the answer must be the reference's (or -ENOMEM), the bytes
 * too, and the bytes before a fault.  what: for messages. */
static int compare_read(struct diff *d, int slot, uint64_t addr, uint64_t len, const char *what,
			uint64_t *hash)
{
	uint64_t ok = ref_access_ok(&d->ref, slot, addr, len, false);
	int want = ok == len ? 0 : -EFAULT, got;
	uint64_t upto;

	if (len > MAX_ACCESS || grow(d, len ? len : 1))
		return 0;
	memset(d->buf, 0xa5, len);
	got = thps_read(d->proc[slot], addr, d->buf, len);
	if (hash)
		*hash = got == 0 ? diff_hash(d->buf, len) : (uint64_t)(int64_t)got;
	if (got == -ENOMEM) {
		d->nenomem++;
		return 0;
	}
	if (got != want)
		return fail(d, "%s p%d %#" PRIx64 "+%#" PRIx64 ": model %s, reference %s", what, slot,
			    addr, len, diff_errname(got), diff_errname(want));
	upto = got ? ok : len;
	ref_mark_young(&d->ref, slot, addr, upto); /* the accessed bit */
	ref_read(&d->ref, slot, addr, d->rbuf, upto);
	if (!memcmp(d->buf, d->rbuf, upto))
		return 0;
	for (uint64_t i = 0; i < upto; i++)
		if (d->buf[i] != d->rbuf[i])
			return fail(d, "%s p%d: byte %#" PRIx64 " is %#x, reference %#x", what, slot,
				    addr + i, d->buf[i], d->rbuf[i]);
	return 0;
}

/* ---- following the model after -ENOMEM ---- */
static int resync_write(struct diff *d, int slot, uint64_t addr, uint64_t len, const uint8_t *new_)
{
	bool stopped = false;
	uint8_t old[REF_PAGE_SIZE], now[REF_PAGE_SIZE];

	len = ref_access_ok(&d->ref, slot, addr, len, true); /* it could reach no further */
	for (uint64_t off = 0; off < len;) {
		uint64_t a = addr + off, chunk = REF_PAGE_SIZE - (a & (REF_PAGE_SIZE - 1));
		int r;

		if (chunk > len - off)
			chunk = len - off;
		ref_read(&d->ref, slot, a, old, chunk);
		r = thps_read(d->proc[slot], a, now, chunk);
		if (r == -ENOMEM) {
			stopped = true;
		} else if (r) {
			return fail(d, "write -ENOMEM, then reading %#" PRIx64 " back: %s", a,
				    diff_errname(r));
		} else if ((ref_mark_young(&d->ref, slot, a, chunk), !stopped) &&
			   !memcmp(now, new_ + off, chunk)) {
			ref_write(&d->ref, slot, a, now, chunk);
		} else if (!memcmp(now, old, chunk)) {
			stopped = true;
		} else {
			return fail(d, "write -ENOMEM: %#" PRIx64 "+%#" PRIx64 " holds neither the old "
				    "bytes nor the new%s", a, chunk,
				    stopped ? " (or new bytes after old ones)" : "");
		}
		off += chunk;
	}
	return 0;
}

static bool same_mapping(const struct vma_rec *v, const struct ref_page *p)
{
	return v && p && (p->flags & RP_MAPPED) && v->prot == p->prot &&
	       v->flags == (p->flags & (RP_HUGEPAGE | RP_NOHUGEPAGE));
}

static int resync_mremap(struct diff *d, int slot, const struct op *op)
{
	uint64_t addr = op->addr, new_addr = op->addr2;
	uint64_t old_len = (op->len + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1);
	uint64_t new_len = (op->len2 + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1);
	struct layout l = { 0 };
	uint8_t *moved;
	uint32_t id;
	int ret = 0;

	if (!(op->flags & 2)) /* MREMAP_FIXED */
		return compare_layout(d, slot);
	moved = calloc((old_len >> REF_PAGE_SHIFT) + 1, 1);
	if (!moved)
		abort();
	thps_for_each_vma(d->proc[slot], layout_add, &l);
	/* each source page: still there, moved to its destination, or shrunk away */
	for (uint64_t o = 0; o < old_len && !ret; o += REF_PAGE_SIZE) {
		const struct ref_page *p = ref_page_at(&d->ref, slot, addr + o);
		const struct vma_rec *v = layout_find(&l, addr + o);
		bool was = p && (p->flags & RP_MAPPED);

		if (v && !same_mapping(v, p))
			ret = fail(d, "mremap -ENOMEM: source page %#" PRIx64 " is mapped, but not "
				   "as it was", addr + o);
		else if (!v && was && o < new_len) {
			const struct vma_rec *w = layout_find(&l, new_addr + o);

			if (!same_mapping(w, p))
				ret = fail(d, "mremap -ENOMEM: source page %#" PRIx64 " vanished but "
					   "its destination %#" PRIx64 " does not hold it", addr + o,
					   new_addr + o);
			moved[o >> REF_PAGE_SHIFT] = 1;
		}
	}
	/* each destination page not moved: as it was, or unmapped */
	for (uint64_t o = 0; o < new_len && !ret; o += REF_PAGE_SIZE) {
		const struct vma_rec *w = layout_find(&l, new_addr + o);

		if (o < old_len && moved[o >> REF_PAGE_SHIFT])
			continue;
		if (w && !same_mapping(w, ref_page_at(&d->ref, slot, new_addr + o)))
			ret = fail(d, "mremap -ENOMEM: destination page %#" PRIx64 " is mapped but "
				   "was not, or not so", new_addr + o);
	}
	if (!ret) {
		for (uint64_t o = 0; o < new_len; o += REF_PAGE_SIZE)
			if (!(o < old_len && moved[o >> REF_PAGE_SHIFT]) &&
			    !layout_find(&l, new_addr + o))
				ref_unmap_page(&d->ref, slot, new_addr + o);
		for (uint64_t o = 0; o < old_len; o += REF_PAGE_SIZE)
			if (!layout_find(&l, addr + o) && !(o < new_len && moved[o >> REF_PAGE_SHIFT]))
				ref_unmap_page(&d->ref, slot, addr + o);
		/* a new id per run of moved pages that had one id (one VMA each) */
		uint32_t old_id = 0;

		id = 0;
		for (uint64_t o = 0; o < old_len && o < new_len; o += REF_PAGE_SIZE) {
			const struct ref_page *p = ref_page_at(&d->ref, slot, addr + o);

			if (!moved[o >> REF_PAGE_SHIFT]) {
				id = 0;
				continue;
			}
			if (!id || p->id != old_id)
				id = ref_new_id(&d->ref);
			old_id = p->id;
			ref_move_page(&d->ref, slot, addr + o, new_addr + o, id);
		}
	}
	free(moved);
	free(l.v);
	if (ret)
		return ret;
	/* the bytes followed the pages */
	for (uint64_t o = 0; o < new_len && !d->failed; o += REF_PAGE_SIZE) {
		const struct ref_page *p = ref_page_at(&d->ref, slot, new_addr + o);

		if (p && (p->flags & RP_MAPPED) && p->prot)
			compare_read(d, slot, new_addr + o, REF_PAGE_SIZE, "after mremap -ENOMEM", NULL);
	}
	return d->failed ? -1 : compare_layout(d, slot);
}

/* ---- one operation ---- */

/* What the reference's answer lets the model do. */
static int judge(struct diff *d, const struct op *op, int got, const struct ref_expect *e,
		 enum ref_path *path)
{
	char line[256];

	*path = REF_DECIDE;
	if (got == e->err)
		*path = REF_OK; /* an error changes nothing, but where Linux's does */
	else if (e->collapse && (got == -EINVAL || got == -EAGAIN || got == -ENOMEM))
		*path = REF_OK; /* MADV_COLLAPSE changes no byte, whatever it answers */
	else if (e->alt != REF_NO_ALT && got == e->alt)
		*path = REF_ALT;
	else if (got == -ENOMEM && e->enomem_ok)
		*path = REF_ENOMEM;
	else {
		op_format(op, line, sizeof(line));
		return fail(d, "%s: model %s, reference %s%s%s", line, diff_errname(got), diff_errname(e->err),
			    e->alt != REF_NO_ALT ? " or " : "",
			    e->alt != REF_NO_ALT ? diff_errname(e->alt) : "");
	}
	if (*path == REF_ENOMEM)
		d->nenomem++;
	return 0;
}

static int slot_of(const struct diff *d, const struct op *op)
{
	return d->cfg.first_slot + op->proc % d->cfg.nr_slots;
}

static int step_mapping(struct diff *d, const struct op *op, int slot)
{
	thps_proc *p = d->proc[slot];
	struct ref *r = &d->ref;
	struct ref_expect e;
	enum ref_path path = REF_DECIDE;
	uint64_t out = 0;
	int got;

	switch (op->kind) {
	case OP_mmap:
		diff_sync_ref_knobs(d);
		e = ref_mmap(r, slot, op->addr, op->len, op->prot, op->flags, REF_DECIDE, 0);
		break;
	case OP_munmap:
		e = ref_munmap(r, slot, op->addr, op->len, REF_DECIDE);
		break;
	case OP_mprotect:
		e = ref_mprotect(r, slot, op->addr, op->len, op->prot, REF_DECIDE);
		break;
	case OP_madvise:
		e = ref_madvise(r, slot, op->addr, op->len, op->prot, REF_DECIDE);
		break;
	default:
		e = ref_mremap(r, slot, op->addr, op->len, op->len2, op->flags, op->addr2, REF_DECIDE);
		break;
	}
	if (e.skip) {
		d->nskipped++;
		return 1;
	}
	/* judged by collapse.c on a machine of its own; with other threads in
	 * it (the shared machine) the counters it reads are theirs too, and
	 * only the answer is checked, as any of MADV_COLLAPSE's */
	if (e.collapse && !d->cfg.shared) {
		char why[512];

		note(d, 0); /* its answer depends on the THP settings */
		if (compare_layout(d, slot))
			return -1;
		if (collapse_madvise(d, op, slot, why, sizeof(why)))
			return fail(d, "%s", why);
		return 0;
	}
	switch (op->kind) {
	case OP_mmap:
		got = thps_mmap(p, op->addr, op->len, op->prot, op->flags, &out);
		break;
	case OP_munmap:
		got = thps_munmap(p, op->addr, op->len);
		break;
	case OP_mprotect:
		got = thps_mprotect(p, op->addr, op->len, op->prot);
		break;
	case OP_madvise:
		got = thps_madvise(p, op->addr, op->len, op->prot);
		break;
	default:
		got = thps_mremap(p, op->addr, op->len, op->len2, op->flags, op->addr2, &out);
		break;
	}
	/* the metamorphic runs compare answers across THP settings; whether a
	 * MADV_COLLAPSE succeeds depends on them (a huge zero PMD is already
	 * collapsed, zero-page entries are not), only its bytes may not */
	note(d, e.collapse ? 0 : (uint64_t)(int64_t)got ^ out << 8);
	if (judge(d, op, got, &e, &path))
		return -1;
	if (path == REF_OK && !got && (op->kind == OP_mmap || op->kind == OP_mremap) &&
	    out != e.addr) {
		char line[256];

		op_format(op, line, sizeof(line));
		return fail(d, "%s: model returned %#" PRIx64 ", reference %#" PRIx64, line, out,
			    e.addr);
	}
	if (path == REF_ENOMEM)
		return op->kind == OP_mremap ? resync_mremap(d, slot, op) : 0;
	if (path == REF_DECIDE)
		return 0;
	switch (op->kind) {
	case OP_mmap:
		ref_mmap(r, slot, op->addr, op->len, op->prot, op->flags, path, out);
		break;
	case OP_munmap:
		ref_munmap(r, slot, op->addr, op->len, path);
		break;
	case OP_mprotect:
		ref_mprotect(r, slot, op->addr, op->len, op->prot, path);
		break;
	case OP_madvise:
		ref_madvise(r, slot, op->addr, op->len, op->prot, path);
		collapse_note_madvise(d, op, slot, got);
		break;
	default:
		ref_mremap(r, slot, op->addr, op->len, op->len2, op->flags, op->addr2, path);
		break;
	}
	return 0;
}

static int step_write(struct diff *d, const struct op *op, int slot)
{
	uint64_t ok = ref_access_ok(&d->ref, slot, op->addr, op->len, true);
	int want = ok == op->len ? 0 : -EFAULT, got;
	uint8_t *data;

	if (op->len > MAX_ACCESS || grow(d, op->len ? op->len : 1)) {
		d->nskipped++;
		return 1;
	}
	data = malloc(op->len ? op->len : 1);
	if (!data)
		abort();
	pattern_fill(op->seed, data, op->len);
	got = thps_write(d->proc[slot], op->addr, data, op->len);
	note(d, (uint64_t)(int64_t)got);
	if (got == -ENOMEM) {
		d->nenomem++;
		resync_write(d, slot, op->addr, op->len, data);
	} else if (got != want) {
		char line[256];

		op_format(op, line, sizeof(line));
		fail(d, "%s: model %s, reference %s", line, diff_errname(got), diff_errname(want));
	} else {
		ref_write(&d->ref, slot, op->addr, data, got ? ok : op->len);
		ref_mark_young(&d->ref, slot, op->addr, got ? ok : op->len);
	}
	free(data);
	if (d->failed)
		return -1;
	/* isolation: no other process sees it */
	if (d->cfg.isolation)
		for (int q = d->cfg.first_slot; q < d->cfg.first_slot + d->cfg.nr_slots; q++)
			if (q != slot && d->proc[q] &&
			    compare_read(d, q, op->addr,
					 op->len < ISOLATION_BYTES ? op->len : ISOLATION_BYTES,
					 "isolation: after a write by another process, read", NULL))
				return -1;
	return 0;
}

static int step_touch(struct diff *d, const struct op *op, int slot)
{
	struct thps_touch t = { .addr = op->addr, .len = op->len, .step = op->len2,
				.op = op->prot ? THPS_TOUCH_WRITE : THPS_TOUCH_READ,
				.value = (uint8_t)op->seed, .check = 1 };
	uint64_t end = op->addr + op->len, want_done = 0, want_mism = 0, a;
	int want = 0, got;
	char line[256];

	if (op->len2 && op->len / op->len2 > (1u << 16)) {
		d->nskipped++;
		return 1;
	}
	if (!op->len2 || end < op->addr) {
		want = -EINVAL;
	} else {
		for (a = op->addr; a < end; a += op->len2) {
			if (ref_access_ok(&d->ref, slot, a, 1, op->prot) != 1) {
				want = -EFAULT;
				break;
			}
			if (!op->prot && ref_byte(&d->ref, slot, a) != t.value)
				want_mism++;
			want_done = a - op->addr + 1;
			if (a + op->len2 < a)
				break;
		}
	}
	got = thps_touch(d->proc[slot], &t);
	note(d, (uint64_t)(int64_t)got ^ t.done << 8 ^ t.mismatches << 40);
	op_format(op, line, sizeof(line));
	if (got == -ENOMEM) {
		d->nenomem++;
		if (t.done > want_done)
			return fail(d, "%s: -ENOMEM after %#" PRIx64 " bytes, beyond the reference's "
				    "%#" PRIx64, line, t.done, want_done);
		want_done = t.done;
	} else if (got != want) {
		return fail(d, "%s: model %s, reference %s", line, diff_errname(got), diff_errname(want));
	} else if (t.done != want_done) {
		return fail(d, "%s: done %#" PRIx64 ", reference %#" PRIx64, line, t.done, want_done);
	}
	if (!op->prot && got != -ENOMEM && t.mismatches != want_mism)
		return fail(d, "%s: %" PRIu64 " bytes differ from %u, reference %" PRIu64, line,
			    t.mismatches, t.value, want_mism);
	if (want != -EINVAL)
		for (a = op->addr; a < end && a - op->addr < want_done; a += op->len2) {
			if (op->prot)
				ref_write(&d->ref, slot, a, &t.value, 1);
			ref_mark_young(&d->ref, slot, a, 1);
			if (a + op->len2 < a)
				break;
		}
	return 0;
}

static int step_fork(struct diff *d, const struct op *op, int slot)
{
	int child = -1, got;

	if (!d->proc[slot]) {
		/* a free slot: a new process */
		got = thps_proc_new(d->m, &d->proc[slot]);
		note(d, (uint64_t)(int64_t)got);
		if (got == -ENOMEM) {
			d->nenomem++;
			return 0;
		}
		if (got)
			return fail(d, "thps_proc_new: %s", diff_errname(got));
		ref_proc_new(&d->ref, slot);
		d->khugepaged_mm[slot] = 0;
		return 0;
	}
	for (int q = d->cfg.first_slot; q < d->cfg.first_slot + d->cfg.nr_slots; q++)
		if (!d->proc[q]) {
			child = q;
			break;
		}
	if (child < 0) {
		d->nskipped++;
		return 1;
	}
	got = thps_fork(d->proc[slot], &d->proc[child]);
	note(d, (uint64_t)(int64_t)got);
	if (got == -ENOMEM) {
		d->nenomem++;
		if (d->proc[child])
			return fail(d, "fork -ENOMEM left a child behind");
		return 0;
	}
	if (got)
		return fail(d, "fork p%d: %s", slot, diff_errname(got));
	ref_fork(&d->ref, slot, child);
	d->khugepaged_mm[child] = d->khugepaged_mm[slot]; /* khugepaged_fork */
	return 0;
}

int diff_step(struct diff *d, const struct op *op)
{
	int slot = slot_of(d, op), ret = 0;

	if (d->failed)
		return -1;
	if (op->kind != OP_shrink && op->kind != OP_knob && op->kind != OP_fork &&
	    op->kind != OP_khugepaged && !d->proc[slot]) {
		d->nskipped++;
		return 0;
	}
	if (op->kind != OP_knob)
		note(d, op->kind);
	switch (op->kind) {
	case OP_mmap:
	case OP_munmap:
	case OP_mprotect:
	case OP_madvise:
	case OP_mremap:
		ret = step_mapping(d, op, slot);
		break;
	case OP_read: {
		uint64_t h = 0;

		if (op->len > MAX_ACCESS) {
			d->nskipped++;
			return 0;
		}
		ret = compare_read(d, slot, op->addr, op->len, "read", &h);
		note(d, h);
		break;
	}
	case OP_write:
		ret = step_write(d, op, slot);
		break;
	case OP_touch:
		ret = step_touch(d, op, slot);
		break;
	case OP_fork:
		ret = step_fork(d, op, slot);
		break;
	case OP_exit:
		thps_exit(d->proc[slot]);
		d->proc[slot] = NULL;
		ref_exit(&d->ref, slot);
		d->khugepaged_mm[slot] = 0;
		break;
	case OP_shrink:
		thps_drop_caches(d->m);
		break;
	case OP_khugepaged: {
		char why[512];

		/* thps_khugepaged_run wants no other thread in the model */
		if (!op->seed || op->seed > 100 || d->cfg.shared) {
			d->nskipped++;
			return 0;
		}
		if (collapse_khugepaged(d, op, why, sizeof(why)))
			ret = fail(d, "%s", why);
		break;
	}
	case OP_knob:
		if (op_knob_name(op->knob) && op_knob_value(op->knob, op->value))
			thps_knob_set(d->m, op_knob_name(op->knob), op_knob_value(op->knob, op->value));
		break;
	default:
		d->nskipped++;
		return 0;
	}
	if (ret < 0 || d->failed)
		return -1;
	if (ret > 0) /* skipped */
		return 0;
	d->nops++;
	if (d->cfg.check_every && d->nops % (uint64_t)d->cfg.check_every == 0 && thps_check(d->m)) {
		char line[256];

		op_format(op, line, sizeof(line));
		d->nops--;
		return fail(d, "after %s: state check: %s", line, thps_last_error(d->m));
	}
	if (d->cfg.layout_every && d->nops % (uint64_t)d->cfg.layout_every == 0 && d->proc[slot] &&
	    compare_layout(d, slot)) {
		d->nops--;
		return -1;
	}
	return 0;
}

/* ---- a run ---- */
int diff_open(struct diff *d, const struct diff_cfg *cfg)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	if (!d->cfg.nr_slots) {
		d->cfg.first_slot = 0;
		d->cfg.nr_slots = REF_MAX_PROCS;
	}
	ref_init(&d->ref);
	if (cfg->shared) {
		d->m = cfg->shared;
	} else {
		struct thps_config mc = { .ram_bytes = (cfg->ram_mib ? cfg->ram_mib : 64) << 20 };

		err = thps_machine_new(&mc, &d->m);
		if (err) {
			snprintf(d->why, sizeof(d->why), "thps_machine_new: %s", diff_errname(err));
			return -1;
		}
		if (cfg->inject_count || cfg->inject_nth)
			thps_fail_alloc(d->m, cfg->inject_class, cfg->inject_nth, cfg->inject_sticky);
	}
	err = thps_proc_new(d->m, &d->proc[d->cfg.first_slot]);
	if (err == -ENOMEM)
		return 0; /* an injected failure: the run goes on with no process */
	if (err) {
		snprintf(d->why, sizeof(d->why), "thps_proc_new: %s", diff_errname(err));
		return -1;
	}
	ref_proc_new(&d->ref, d->cfg.first_slot);
	return 0;
}

/* kB the huge zero page holds once every process has exited: it stays
 * only under the persistent lifetime.  Whether it exists shows in the
 * lifetime knob, which refuses to change while it does (sysfs.c). */
static uint64_t hzp_kb(thps_machine *m)
{
	char life[32];

	if (thps_knob_get(m, "thpsim/huge_zero_page_lifetime", life, sizeof(life)) ||
	    strcmp(life, "persistent"))
		return 0;
	if (thps_knob_set(m, "thpsim/huge_zero_page_lifetime", "per-mm") != -EBUSY) {
		thps_knob_set(m, "thpsim/huge_zero_page_lifetime", "persistent");
		return 0;
	}
	return THPS_HPAGE_PMD_SIZE >> 10;
}

int diff_close(struct diff *d)
{
	int first = d->cfg.first_slot, last = first + d->cfg.nr_slots;

	if (!d->cfg.shared && (d->cfg.inject_count || d->cfg.inject_nth))
		/* the end is checked with every allocation allowed */
		for (int c = 0; c < THPS_NR_ALLOC_CLASSES; c++)
			thps_fail_alloc(d->m, (enum thps_alloc_class)c, 0, 0);
	/* every byte of every process, and the layout */
	for (int s = first; s < last && !d->failed; s++) {
		if (!d->proc[s])
			continue;
		for (uint64_t i = 0; i < REF_PAGES && !d->failed; i++) {
			const struct ref_page *p = &d->ref.mm[s]->page[i];

			if ((p->flags & RP_MAPPED) && p->prot)
				compare_read(d, s, REF_BASE + (i << REF_PAGE_SHIFT), REF_PAGE_SIZE,
					     "final read", NULL);
		}
		if (!d->failed)
			compare_layout(d, s);
	}
	if (!d->cfg.shared && !d->failed && thps_check(d->m))
		fail(d, "at the end: state check: %s", thps_last_error(d->m));
	for (int s = first; s < last; s++)
		if (d->proc[s]) {
			thps_exit(d->proc[s]);
			d->proc[s] = NULL;
		}
	ref_free(&d->ref);
	if (!d->cfg.shared) {
		uint64_t mi[THPS_NR_MEMINFO_ITEMS];

		thps_drop_caches(d->m);
		if (!d->failed && thps_check(d->m))
			fail(d, "after every process exited: state check: %s", thps_last_error(d->m));
		thps_meminfo(d->m, mi);
		if (!d->failed && d->cfg.leak_check) {
			uint64_t hzp = hzp_kb(d->m);

			if (mi[THPS_MEM_MemFree] + hzp != mi[THPS_MEM_MemTotal])
				fail(d, "leak: after every process exited and the shrinkers ran, MemFree %"
				     PRIu64 " kB of MemTotal %" PRIu64 " kB (a persistent huge zero page "
				     "keeps %" PRIu64 " kB)", mi[THPS_MEM_MemFree], mi[THPS_MEM_MemTotal], hzp);
		}
		if (!d->failed)
			thps_machine_free(d->m);
		/* a machine that failed is leaked on purpose: freeing an inconsistent
		 * one could trip its own checks */
	}
	d->m = NULL;
	free(d->buf);
	free(d->rbuf);
	d->buf = d->rbuf = NULL;
	d->buflen = 0;
	return d->failed ? -1 : 0;
}

int diff_run(const struct op_list *l, const struct diff_cfg *cfg, struct diff *d)
{
	struct diff_cfg c = *cfg;

	if (!c.ram_mib)
		c.ram_mib = l->ram_mib;
	if (diff_open(d, &c)) {
		d->failed = true;
		return -1;
	}
	for (size_t i = 0; i < l->n; i++)
		if (diff_step(d, &l->op[i])) {
			d->failed_at = i;
			break;
		}
	if (!d->failed)
		d->failed_at = l->n;
	return diff_close(d);
}
